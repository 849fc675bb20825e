import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import type { Settings } from "../config.js";
import { Catalogue } from "../daemon/catalogue.js";
import type { DaemonDb } from "../daemon/daemon-db.js";
import { DefinitionService } from "../daemon/definitions.js";
import type { StoredAutomation } from "../daemon/definitions-store.js";
import { definitionVersion } from "../daemon/types.js";
import { loadAutomationFile, loadSecretKey, type Automation } from "../definition/index.js";
import { ConveyorError } from "../errors.js";
import type { Logger } from "../log.js";

/** What `conveyor run` and `conveyor ls` take as `<file-or-id>`, and under which identity it runs. */
export interface RunTarget {
  /** The key of its runs, snapshot, ledger, metadata and lock: the stored automation's id, or the file's slug. */
  key: string;
  automation: Automation;
  /** The automation stored in the state database that the run is of; its account runs it. */
  stored: StoredAutomation | null;
  /** Told on standard error: which stored automation a file or slug turned out to be. */
  notice: string | null;
}

/**
 * One identity for the CLI and the daemon: an id or slug of an automation in
 * the state database runs that automation, and a definition file whose slug
 * is a stored automation's runs under that automation's id, so both share
 * runs, snapshot, ledger, metadata and lock. The file's own definition runs
 * (the user asked for that file); the stored one is not changed, and the
 * notice says when they differ. Anything else keeps running under its slug.
 */
export async function resolveRunTarget(arg: string, settings: Settings, db: DaemonDb, account: string, logger: Logger): Promise<RunTarget> {
  const catalogueFolder = settings.automations ? path.join(settings.automations, "published") : undefined;
  const definitions = new DefinitionService(db.definitions, await Catalogue.load(catalogueFolder, logger), loadSecretKey(settings));
  if (existsSync(arg)) return fileTarget(arg, await loadAutomationFile(arg), definitions, account, settings);
  const stored = /^\d+$/.test(arg) ? await definitions.byKey(arg) : await storedBySlug(definitions, arg, account);
  if (stored) {
    const notice = /^\d+$/.test(arg) ? null : `${arg} is automation ${stored.id} in the state database: the run is recorded under ${stored.id}`;
    return { key: String(stored.id), automation: effectiveOf(definitions, stored, settings), stored, notice };
  }
  const file = await folderFileOf(arg, settings);
  if (file) return fileTarget(file.file, file.automation, definitions, account, settings);
  throw notFound(arg, settings);
}

async function fileTarget(shown: string, automation: Automation, definitions: DefinitionService, account: string, settings: Settings): Promise<RunTarget> {
  const stored = await storedBySlug(definitions, automation.slug, account);
  if (!stored) return { key: automation.slug, automation, stored: null, notice: null };
  let same = false;
  try {
    same = definitionVersion(effectiveOf(definitions, stored, settings)) === definitionVersion(automation);
  } catch {
    // The stored definition no longer validates: the file's certainly differs, and it is the one that runs.
  }
  const differs = same ? "" : `; the file differs from the stored definition: this run uses the file's, the daemon's runs keep the stored one until it is updated (PATCH /v3/automations/${stored.kind}/${stored.id})`;
  return { key: String(stored.id), automation, stored, notice: `${shown} is automation ${stored.id} (slug ${stored.slug}) in the state database: the run is recorded under ${stored.id}${differs}` };
}

/** Slugs are unique per account: the CLI's account's automation first, else the only one with the slug. */
async function storedBySlug(definitions: DefinitionService, slug: string, account: string): Promise<StoredAutomation | null> {
  const matches = (await definitions.all()).filter((a) => a.slug === slug);
  const own = matches.find((a) => a.account === account);
  if (own) return own;
  if (matches.length > 1) {
    throw new ConveyorError("usage", `slug "${slug}" names automations of several accounts (ids ${matches.map((a) => a.id).join(", ")}), none of account ${account}`, {
      hint: "give the automation's id instead of its slug (the daemon's GET /v3/automations/custom and /installed list them)",
    });
  }
  return matches[0] ?? null;
}

function effectiveOf(definitions: DefinitionService, stored: StoredAutomation, settings: Settings): Automation {
  try {
    return definitions.effective(stored).automation;
  } catch (err) {
    // An installed automation is its published one plus the installer's values: the CLI reads the catalogue from the same folder as the daemon.
    const hint =
      stored.kind === "installed"
        ? `give the CLI the daemon's CONVEYOR_AUTOMATIONS (its published/ folder holds published automation ${stored.sharedId ?? "?"})${settings.automations ? "" : ", which is not set here"}`
        : `fix it with PATCH /v3/automations/custom/${stored.id}, or run a corrected definition file`;
    throw new ConveyorError("definition_invalid", `automation ${stored.id} (slug ${stored.slug}) in the state database cannot run: ${(err as Error).message}`, { cause: err, hint });
  }
}

async function folderFileOf(slug: string, settings: Settings): Promise<{ automation: Automation; file: string } | null> {
  const folder = settings.automations;
  if (!folder || !existsSync(folder)) return null;
  for (const name of (await readdir(folder)).filter((n) => n.endsWith(".json")).sort()) {
    const file = path.join(folder, name);
    const automation = await loadAutomationFile(file).catch(() => undefined);
    if (automation?.slug === slug) return { automation, file };
  }
  return null;
}

function notFound(arg: string, settings: Settings): ConveyorError {
  const folder = settings.automations;
  return new ConveyorError("definition_not_found", `no definition file "${arg}", no automation with id or slug "${arg}" in the state database${folder ? `, and no automation with slug "${arg}" in ${folder}` : ""}`, {
    hint: "Give the path of a definition file, or the id or slug of an automation in the state database (the daemon's GET /v3/automations/custom and /installed list them).",
  });
}
