import type { MetadataStore } from "../../connectors/types.js";
import type { StateStore } from "../state/index.js";

/**
 * An automation's `metadata` (OAuth tokens, the IMAP checkpoint) as a
 * connector sees it: read once per run, written through at once, so a token
 * refreshed mid-run survives a crash of the run.
 */
export async function metadataStore(store: StateStore, automation: string): Promise<MetadataStore> {
  const current = await store.getMetadata(automation);
  return {
    get: (key) => current[key],
    set: async (key, value) => {
      current[key] = value;
      await store.setMetadata(automation, current);
    },
  };
}
