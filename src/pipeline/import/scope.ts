/**
 * Step 5 of a product import: the one read of the catalogue a run makes. One
 * bulk export of the records in scope (`search`) with only the fields that
 * matching, live diff, service actions and removal need, streamed into the
 * run's work database.
 *
 * @module
 */

import type { FileConfig } from "../../definition/index.js";
import { ConveyorError } from "../../errors.js";
import type { ServiceClient } from "../../service/index.js";
import type { WorkDb } from "./workdb.js";

export function scopeFields(config: FileConfig, mappedFields: readonly string[], serviceActionFields: readonly string[], options: { before: boolean; limited?: readonly string[] }): string[] | null {
  const fields = new Set<string>([config.identifier]);
  if (config.diff_update) for (const f of config.diff_fields ?? mappedFields) fields.add(f);
  // plan.csv shows each field's value before and after: a full debug run reads the mapped fields it would change.
  // A diff run's "before" is the snapshot it compares with, and a live run writes no plan.csv: both read only what
  // matching, diffing and removal need (the mapped fields of a million-product scope tripled a nightly debug run).
  if (options.before) for (const f of mappedFields) fields.add(f);
  // change_limits weighs each update's value before against its value after (stock and price by default).
  for (const f of options.limited ?? []) fields.add(f);
  for (const f of serviceActionFields) {
    if (f === "*") return null;
    fields.add(f);
  }
  return [...fields];
}

export async function readProductScope(
  client: ServiceClient,
  config: FileConfig,
  fields: string[] | null,
  work: WorkDb,
  signal?: AbortSignal,
): Promise<number> {
  const request = { type: "items" as const, search: config.search ?? "", fields: fields ?? [], signal };
  let total = 0;
  for await (const rows of client.exportRecordPages(request, { signal })) {
    const batch: Array<{ identifier: string; values: Record<string, string> }> = [];
    for (const row of rows) {
      const identifier = row[config.identifier];
      if (identifier === undefined) {
        throw new ConveyorError("service_rejected", `the service's export has no "${config.identifier}" column to match records by`, {
          hint: `Set file_configs[].identifier to a field the service has (guid or sku).`,
        });
      }
      if (identifier !== "") batch.push({ identifier, values: row });
    }
    total += work.addScope(batch);
  }
  return total;
}

/** A scope read under way: the planner awaits `size`; a pass that ends before then stops it. */
export interface ScopeRead {
  readonly size: Promise<number>;
  /** Cancels the read if it still runs, and waits until it no longer writes to the work database. */
  stop(): Promise<void>;
}

/**
 * Starts the scope read before the file is read: its fields are known from the
 * definition (mappedFields), so the export runs while the file downloads, and
 * a large scope or a slow download no longer waits for the other.
 */
export function startProductScope(client: ServiceClient, config: FileConfig, fields: string[] | null, work: WorkDb, signal?: AbortSignal): ScopeRead {
  const controller = new AbortController();
  const size = readProductScope(client, config, fields, work, signal ? AbortSignal.any([signal, controller.signal]) : controller.signal);
  // The planner awaits it and sees its error; until then it must not count as unhandled.
  size.catch(() => undefined);
  return {
    size,
    stop: async () => {
      controller.abort();
      await size.catch(() => undefined);
    },
  };
}
