import { ConveyorError } from "../errors.js";
import { compileActions } from "./actions.js";
import { checkOrderFields } from "./orders.js";
import type { ActionState } from "./action-functions.js";
import { compileTemplate, fieldReader, type NameResolver, type Template } from "./template.js";
import { compileValueDefaults, compileValueMap } from "./value-map.js";
import { RowFailure, newRecord, scalarText, type MappingConfig, type RowErrorInfo, type SkipInfo } from "./types.js";

/**
 * The export direction of one `file_configs[]` entry, per service record:
 * `service_actions → vendor_actions → value_map → value_map_default →
 * field_map → field_run`. Both rule lists test their conditions on the record
 * as it stands (it is the service's own record). `value_map_default` is not in
 * the spec's export list; it is applied right after `value_map`, as on import,
 * so a default carrier works in both directions.
 *
 * `field_map` keys are service fields and values the output columns, in key
 * order. A `field_run` key that is a `field_map` key fills that field's
 * column; any other key adds a column of that name after the mapped ones.
 * Templates read service fields (after the actions).
 */
export type ExportResult =
  | { ok: true; identifier: string; values: string[] }
  | { ok: false; skipped: SkipInfo }
  | { ok: false; error: RowErrorInfo };

export interface ExportMapper {
  /** The header row: output column names. */
  readonly columns: readonly string[];
  /** Service fields the mapping, the actions and their conditions read: what the export must select ("*" = all). */
  readonly reads: readonly string[];
  readonly identifier: string;
  /** `index` is the record's position in the export (1-based), used as its line in errors. */
  map(serviceRecord: Readonly<Record<string, unknown>>, index: number): ExportResult;
}

export interface ExportMapperOptions {
  type?: "products" | "orders" | "fitment";
  now?: () => Date;
}

/** Service values as text: scalars as written, objects as JSON; nested fields reachable as `billing.city`. */
function readService(source: Readonly<Record<string, unknown>>, field: string): string | undefined {
  let value: unknown = source[field];
  if (value === undefined && field.includes(".")) {
    value = source;
    for (const part of field.split(".")) {
      value = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[part] : undefined;
    }
  }
  if (value === undefined) return undefined;
  if (value === null) return "";
  return scalarText(value) ?? JSON.stringify(value);
}

export function createExportMapper(config: MappingConfig, options: ExportMapperOptions = {}): ExportMapper {
  const reads = new Set<string>();
  const identifier = config.identifier?.trim() || (options.type === "orders" ? "oid" : "guid");
  reads.add(identifier);
  // A service record may carry any field: every name resolves, and is remembered as one to select.
  const resolve: NameResolver<undefined> = (name) => {
    reads.add(name);
    return fieldReader(name);
  };
  const now = options.now ? { now: options.now } : {};
  const service = compileActions(config.service_actions, { key: "service_actions", on: "record", resolve, ...now });
  const vendor = compileActions(config.vendor_actions, { key: "vendor_actions", on: "record", resolve, ...now });
  // Conditions read fields too; "*" (a keyword term) tells the caller to select every field.
  for (const field of [...service.conditionFields, ...vendor.conditionFields]) reads.add(field);
  const lists = [
    ["service_actions", service],
    ["vendor_actions", vendor],
  ] as const;
  const valueMap = compileValueMap(config.value_map);
  const defaults = compileValueDefaults(config.value_map_default);

  const fields: string[] = [];
  const columns: string[] = [];
  for (const [field, column] of Object.entries(config.field_map)) {
    if (typeof column !== "string" || column.trim() === "") {
      throw new ConveyorError("definition_invalid", `field_map.${field}: on export the value is the output column name`, {
        details: { field: `field_map.${field}` },
        hint: 'Write "service field": "Column name"; offsets and expressions only apply to imports.',
      });
    }
    fields.push(field);
    columns.push(column);
    reads.add(field);
  }
  const runs: Array<[number, Template<undefined>]> = [];
  for (const [field, value] of Object.entries(config.field_run ?? {})) {
    const text = scalarText(value);
    if (text === undefined) {
      throw new ConveyorError("definition_invalid", `field_run.${field}: the value must be text or a number`, { details: { field: `field_run.${field}` } });
    }
    let at = fields.indexOf(field);
    if (at < 0) {
      at = columns.length;
      columns.push(field);
    }
    runs.push([at, compileTemplate(text, resolve, `field_run.${field}`)]);
  }
  if (options.type === "orders") checkOrderFields(fields);
  const readList = [...reads];
  const width = columns.length;

  return {
    columns,
    reads: readList,
    identifier,
    map(serviceRecord, index): ExportResult {
      const record = newRecord();
      for (const key in serviceRecord) {
        const text = readService(serviceRecord, key);
        if (text !== undefined) record[key] = text;
      }
      for (const field of readList) {
        if (record[field] === undefined) {
          const text = readService(serviceRecord, field);
          if (text !== undefined) record[field] = text;
        }
      }
      const state: ActionState = { record, ignored: null };
      try {
        for (const [key, actions] of lists) {
          const skippedBy = actions.empty ? -1 : actions.apply(state, undefined);
          if (skippedBy >= 0) {
            const skipped: SkipInfo = { actions: key, rule: skippedBy, line: index };
            const id = state.record[identifier];
            if (id) skipped.identifier = id;
            return { ok: false, skipped };
          }
        }
        valueMap.apply(record);
        defaults.apply(record);
        const values = new Array<string>(width);
        for (let i = 0; i < fields.length; i++) values[i] = record[fields[i] as string] ?? "";
        for (const [at, template] of runs) values[at] = template.constant ?? template.evaluate(record, undefined);
        for (let i = fields.length; i < width; i++) values[i] ??= "";
        return { ok: true, identifier: record[identifier] ?? "", values };
      } catch (err) {
        const failure = err instanceof RowFailure ? err : new RowFailure(err instanceof Error ? err.message : String(err));
        return { ok: false, error: failure.field === undefined ? { line: index, message: failure.message } : { line: index, message: failure.message, field: failure.field } };
      }
    },
  };
}
