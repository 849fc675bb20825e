/**
 * Snapshot entries: what a file config last applied for an identifier, as a
 * run puts them into the state store.
 *
 * @module
 */

export interface SnapshotEntry {
  identifier: string;
  values: Record<string, string>;
  /**
   * The source fingerprint of the row these values were mapped from (its raw
   * cells and the mapping's definition); absent when the values cannot be
   * told from the row alone. A put without one clears the stored one.
   */
  source?: string | null;
}

/**
 * A snapshot entry whose values are already the JSON text the store keeps
 * (`JSON.stringify` of the values), as a run's work database holds them: put
 * as it is, not parsed only to be written again.
 */
export interface SnapshotText {
  identifier: string;
  valuesText: string;
  source?: string | null;
}

export type SnapshotPutEntry = SnapshotEntry | SnapshotText;

/** The JSON text a store keeps of an entry's values. */
export function snapshotValuesText(entry: SnapshotPutEntry): string {
  return "valuesText" in entry ? entry.valuesText : JSON.stringify(entry.values);
}

/**
 * Entries per snapshotPut of a large commit: each put is one transaction of
 * the store. A put per thousand entries rewrote the same index pages a
 * thousand times in a million-record commit; at ten thousand, each page of
 * an import's commit was megabytes of short-lived objects, the peak of a
 * million-record load, and the commit took longer than at two thousand.
 */
export const SNAPSHOT_PUT_ENTRIES = 2_000;
