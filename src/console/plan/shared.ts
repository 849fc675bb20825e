import type { StateStore } from "../../state/index.js";
import { DebugTables } from "./debug-tables.js";

/**
 * One viewer per state store, shared by the API routes and the console's
 * pages: their index and filter caches serve both, and a plan's index is
 * built once however many requests open it together.
 */
const viewers = new WeakMap<StateStore, DebugTables>();

export function debugTablesOf(store: StateStore, dataDir: string): DebugTables {
  let tables = viewers.get(store);
  if (!tables) viewers.set(store, (tables = new DebugTables(store, dataDir)));
  return tables;
}
