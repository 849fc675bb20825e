/**
 * The least any diff run against the SQLite snapshot does (`bench:import`'s
 * floor phase): the run's reader streams the feed, and each page of 1,000
 * identifiers is looked up in the snapshot; no mapping, no scope, no plan,
 * no output.
 *
 * @module
 */
import { eachRow, openReader } from "../src/formats/index.js";
import { SqliteStore } from "../src/state/sqlite.js";

/** Reads `file` and looks up each row's identifier (its first cell) under `key` in the state at `stateFile`; returns the rows. */
export async function diffFloor(stateFile: string, key: string, file: string): Promise<number> {
  const store = new SqliteStore(stateFile);
  const reader = await openReader(file, {});
  let rows = 0;
  let found = 0;
  let ids: string[] = [];
  try {
    await reader.columns();
    for await (const row of eachRow(reader)) {
      rows++;
      ids.push(String((row.raw as string[])[0]));
      if (ids.length < 1000) continue;
      found += (await store.snapshotText(key, ids)).size;
      ids = [];
    }
    found += (await store.snapshotText(key, ids)).size;
  } finally {
    await reader.close();
    await store.close();
  }
  if (found !== rows) throw new Error(`floor: ${found} of ${rows} identifiers in the snapshot`);
  return rows;
}
