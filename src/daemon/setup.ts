import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, copyFile, mkdir, readdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { describeProblem, parseAutomation } from "../definition/index.js";
import { loadItemsCsv } from "../embedded/index.js";
import type { Logger } from "../log.js";
import type { DaemonDb } from "./daemon-db.js";
import type { DefinitionService } from "./definitions.js";

export interface FolderReport {
  created: number;
  updated: number;
  unchanged: number;
  failed: string[];
}

/**
 * Definitions from `CONVEYOR_AUTOMATIONS` into the definitions table at start,
 * matched by slug so a restart never duplicates them. A file edited since it
 * was last loaded replaces the stored definition; one that did not change
 * leaves the stored one alone, so an edit made through the API survives a
 * restart. A slug already used by an automation created through the API is
 * not touched.
 */
export async function loadDefinitionsFolder(definitions: DefinitionService, account: string, folder: string, logger: Logger): Promise<FolderReport> {
  const report: FolderReport = { created: 0, updated: 0, unchanged: 0, failed: [] };
  if (!existsSync(folder)) return report;
  for (const name of (await readdir(folder)).filter((n) => n.endsWith(".json")).sort()) {
    const file = path.join(folder, name);
    try {
      const text = (await readFile(file, "utf8")).replace(/^\uFEFF/, "");
      const hash = createHash("sha256").update(text).digest("hex");
      const raw = JSON.parse(text) as unknown;
      const parsed = parseAutomation(raw);
      if (!parsed.ok) throw new Error(parsed.problems.map(describeProblem).join("; "));
      const existing = await definitions.bySlug(account, parsed.automation.slug);
      if (!existing) {
        await definitions.createCustom(account, raw, { file, hash });
        report.created++;
      } else if (existing.source === null) {
        logger.warn({ file, automation: existing.id, slug: existing.slug }, "definition file skipped: an automation created through the API has its slug");
        report.unchanged++;
      } else if (existing.sourceHash === hash) {
        report.unchanged++;
      } else {
        await definitions.replaceCustom(account, existing.id, raw, hash);
        report.updated++;
      }
    } catch (err) {
      // A definition's problems are joined into its error's message, one after another.
      const message = (err as Error).message;
      logger.error({ file, err: message }, "definition file not loaded");
      report.failed.push(`${name}: ${message}`);
    }
  }
  return report;
}

const COPIED_LIST = ".conveyor-samples-copied";

async function filesUnder(root: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(root, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await filesUnder(root, child)));
    else if (entry.isFile()) out.push(child);
  }
  return out;
}

/**
 * `samples/storage/<path>/…` into `<storage>/<user>/<path>/…` (samples/README.md).
 * Each file is copied once, ever: the list of copied files is kept in the
 * storage root, so a sample feed an import moved to `done/` is not dropped
 * again at the next start and imported a second time.
 */
export async function copySampleStorage(samplesStorage: string, storage: string, user: string): Promise<string[]> {
  if (!existsSync(samplesStorage)) return [];
  const root = path.join(storage, user);
  await mkdir(root, { recursive: true });
  const listFile = path.join(root, COPIED_LIST);
  const copied = new Set(existsSync(listFile) ? (await readFile(listFile, "utf8")).split("\n").filter(Boolean) : []);
  const fresh: string[] = [];
  for (const rel of await filesUnder(samplesStorage)) {
    if (copied.has(rel)) continue;
    const target = path.join(root, ...rel.split("/"));
    await mkdir(path.dirname(target), { recursive: true });
    const source = path.join(samplesStorage, ...rel.split("/"));
    if (!existsSync(target)) {
      await copyFile(source, target);
      // A copy keeps the source's mode (a checkout's 0644); the account's storage is the daemon's alone.
      await chmod(target, 0o600);
      // The source's time, not now: a fresh copy would look like a file still uploading (min_age) to the first run.
      const { atime, mtime } = await stat(source);
      await utimes(target, atime, mtime);
    }
    copied.add(rel);
    fresh.push(rel);
  }
  if (fresh.length > 0) await writeFile(listFile, `${[...copied].sort().join("\n")}\n`);
  return fresh;
}

/**
 * The sample catalogue into the embedded service, once per data folder, so the
 * sample imports have products to change. The mark lives in the data folder,
 * next to the embedded service's data it describes: daemons sharing one
 * PostgreSQL each have their own. (Earlier builds kept it in `daemon_meta`,
 * which is still honoured.)
 */
export async function seedSampleProducts(db: DaemonDb, dataDir: string, file: string, logger: Logger): Promise<number> {
  const mark = path.join(dataDir, ".sample-products-loaded");
  if (!existsSync(file) || existsSync(mark) || (await db.metaGet("sample_products_loaded")) !== null) return 0;
  const result = await loadItemsCsv(dataDir, file);
  for (const error of result.errors) logger.warn({ file, error }, "sample product not loaded");
  await mkdir(dataDir, { recursive: true });
  await writeFile(mark, `${new Date().toISOString()}\n`);
  return result.created + result.updated;
}
