/**
 * Step 5 of a product import: the one read of the catalogue a run makes. One
 * bulk export of the records in scope (`search`) with only the fields that
 * matching, live diff, service actions, change limits and removal need,
 * streamed into the run's work database; and the choice of those fields,
 * with what a live diff run's undo journal reads after the plan instead.
 *
 * @module
 */

import type { FileConfig } from "../../definition/index.js";
import { ConveyorError } from "../../errors.js";
import { parseSearch, searchFields } from "../../search/index.js";
import type { ServiceClient } from "../../service/index.js";
import { LateJournal } from "../../undo/late-journal.js";
import type { PassInput } from "./pass-driver.js";
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
  work.endScope();
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

/** The mapped fields change_limits weighs: the scope reads them, so that each update knows the value it replaces. */
export function limitedFields(config: FileConfig, mapped: readonly string[]): string[] {
  const limits = config.change_limits ?? {};
  return mapped.filter((f) => f !== config.identifier && limits[f] !== undefined);
}

export function serviceActionFields(config: FileConfig): string[] {
  return config.service_actions.flatMap((rule) => (rule.search ? searchFields(parseSearch(rule.search)) : []));
}

/**
 * The scope's fields with the undo journal, which keeps each changed field's value before and every field of what a
 * delete takes away; with `end`, whether a record was listed when read (an undo relists only what the run took off sale).
 * A full run reads them in the scope. A diff run changes few of its records: its scope reads what the run without the
 * journal reads, and the journal's values before are read after the plan for the records it changes (late-journal.ts).
 */
export function journalScope(input: PassInput, work: WorkDb, mapped: readonly string[], limited: readonly string[]): { fields: string[] | null; late?: LateJournal } {
  const { config, undo } = input;
  const journalFields = undo && config.remove !== undefined ? ["listed"] : [];
  const actions = serviceActionFields(config);
  const wide = undo && config.remove === "delete" ? null : scopeFields(config, mapped, actions, { before: (input.debug.full && !input.diff) || undo !== undefined, limited: [...limited, ...journalFields] });
  if (!undo || !input.diff || wide === null) return { fields: wide };
  const narrow = scopeFields(config, mapped, actions, { before: false, limited: [...limited, ...journalFields] });
  if (narrow === null || wide.every((f) => narrow.includes(f))) return { fields: wide };
  const late = new LateJournal({
    writer: undo.writer,
    config: undo.config,
    client: input.client,
    work,
    identifier: config.identifier,
    search: config.search ?? "",
    fields: wide,
    read: new Set(narrow),
    signal: input.signal,
  });
  return { fields: narrow, late };
}
