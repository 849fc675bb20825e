import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describeProblem, parseAutomation, type Automation } from "../definition/index.js";
import type { Logger } from "../log.js";

/** Keys a catalogue file may carry next to the definition: the listing's, not the engine's. */
const CATALOGUE_KEYS = ["shared_id", "id", "logo", "readme", "shared", "user_id"] as const;

export interface PublishedAutomation {
  sharedId: number;
  /** The definition without the catalogue keys; parameters hold the publisher's defaults. */
  raw: Record<string, unknown>;
  automation: Automation;
  logo: string;
  readme: string;
  file: string;
}

/** A stable number from the slug, for a file that names no `shared_id`: adding files never renumbers others. */
function numberFromSlug(slug: string): number {
  return 100_000 + (parseInt(createHash("sha256").update(slug).digest("hex").slice(0, 8), 16) % 900_000);
}

/**
 * The published catalogue (seed v3 part 2.2): shared automations read from a
 * folder of definition files, `<automations folder>/published/` by default.
 * It can only be listed and installed. A file that does not validate is left
 * out and logged with every problem, so one bad file never hides the others.
 */
export class Catalogue {
  private constructor(private readonly entries: Map<number, PublishedAutomation>) {}

  static empty(): Catalogue {
    return new Catalogue(new Map());
  }

  static async load(folder: string | undefined, logger: Logger): Promise<Catalogue> {
    const entries = new Map<number, PublishedAutomation>();
    if (!folder || !existsSync(folder)) return new Catalogue(entries);
    for (const name of (await readdir(folder)).filter((n) => n.endsWith(".json")).sort()) {
      const file = path.join(folder, name);
      let json: unknown;
      try {
        json = JSON.parse((await readFile(file, "utf8")).replace(/^\uFEFF/, ""));
      } catch (err) {
        logger.error({ file, err: (err as Error).message }, "published automation skipped: not valid JSON");
        continue;
      }
      if (!json || typeof json !== "object" || Array.isArray(json)) continue;
      const raw = { ...(json as Record<string, unknown>) };
      const extra: Record<string, unknown> = {};
      for (const key of CATALOGUE_KEYS) {
        extra[key] = raw[key];
        delete raw[key];
      }
      const parsed = parseAutomation(raw);
      if (!parsed.ok) {
        logger.error({ file, problems: parsed.problems.map(describeProblem) }, "published automation skipped: invalid definition");
        continue;
      }
      const given = Number(extra.shared_id);
      const sharedId = Number.isInteger(given) && given > 0 ? given : numberFromSlug(parsed.automation.slug);
      if (entries.has(sharedId)) {
        logger.error({ file, shared_id: sharedId }, "published automation skipped: its shared_id is already taken");
        continue;
      }
      entries.set(sharedId, {
        sharedId,
        raw,
        automation: parsed.automation,
        logo: typeof extra.logo === "string" ? extra.logo : "",
        readme: typeof extra.readme === "string" ? extra.readme : "",
        file,
      });
    }
    return new Catalogue(entries);
  }

  get(sharedId: number): PublishedAutomation | undefined {
    return this.entries.get(sharedId);
  }

  list(): PublishedAutomation[] {
    return [...this.entries.values()];
  }
}
