import type { Logger } from "../log.js";
import type { Catalogue } from "./catalogue.js";
import type { DefinitionStore, StoredAutomation } from "./definitions-store.js";
import { feedingParameters, openSecrets, sealSecrets } from "./secret-fields.js";

/**
 * Databases written before connection secrets were sealed hold them in clear
 * (a password, a token header, the value of a `<<sftp password>>` parameter).
 * At start each stored definition is sealed in place. A body already sealed
 * comes out the same, so the pass changes nothing the second time; a row the
 * key cannot open, or one written meanwhile, is left and reported.
 */
export interface SealReport {
  sealed: number[];
  failed: Array<{ id: number; error: string }>;
}

function feedingOf(stored: StoredAutomation, catalogue: Catalogue): Set<string> {
  if (stored.kind !== "installed") return new Set();
  // An installed body holds only the installer's values; the published connection says which of them are secret.
  const published = catalogue.get(Number(stored.sharedId));
  return published ? feedingParameters(published.raw) : new Set();
}

export async function sealStoredDefinitions(store: DefinitionStore, catalogue: Catalogue, key: Buffer, logger: Logger): Promise<SealReport> {
  const report: SealReport = { sealed: [], failed: [] };
  for (const stored of await store.all()) {
    try {
      const sealed = sealSecrets(stored.body, key, feedingOf(stored, catalogue));
      if (JSON.stringify(sealed) === JSON.stringify(stored.body)) continue;
      // Sealing must not change what the definition means: the opened form is the stored one.
      if (JSON.stringify(openSecrets(sealed, key)) !== JSON.stringify(openSecrets(stored.body, key))) throw new Error("sealing changed the definition");
      if (await store.reseal(stored.id, sealed, stored.lastModified)) report.sealed.push(stored.id);
    } catch (err) {
      report.failed.push({ id: stored.id, error: (err as Error).message });
    }
  }
  if (report.sealed.length > 0) {
    await store.flush();
    logger.info({ event: "secrets_sealed", automations: report.sealed }, "connection secrets of stored automations encrypted at rest");
  }
  if (report.failed.length > 0) logger.error({ event: "secrets_not_sealed", automations: report.failed }, "stored automations whose secrets could not be sealed; they stay as they were");
  return report;
}
