import { ConveyorError } from "../errors.js";
import { actionWrites, compileActions, type CompiledActions } from "./actions.js";
import type { ActionState } from "./action-functions.js";
import { bindFieldMap, type BoundFieldMap } from "./header.js";
import { checkOrderFields } from "./orders.js";
import { compileTemplate, fieldReader, type NameResolver, type Template } from "./template.js";
import { compileValueDefaults, compileValueMap } from "./value-map.js";
import { NONE_IGNORED, RowFailure, isBlank, newRecord, scalarText, type FieldSource, type MapResult, type MappedRecord, type MappingConfig, type RowErrorInfo, type RowLike, type SkipInfo } from "./types.js";

/**
 * The import direction of one `file_configs[]` entry, per record:
 * `field_map → field_run → value_map → value_map_default → vendor_actions`,
 * then the identifier check. Everything is compiled once when the mapper is
 * created (header check, templates, expressions, conditions); `map` is pure
 * and allocates one record per row (plus an ignored set only when a rule
 * ignores a field).
 */
export interface ImportMapperOptions<Row> {
  /** Default identifier when the config names none: `oid` for orders, `guid` otherwise. */
  type?: "products" | "orders" | "fitment";
  now?: () => Date;
  /**
   * A problem of the row as read that makes it unmappable, checked before
   * mapping (the pipeline passes the CSV reader's `widthProblem`: a row with
   * more or fewer cells than the header has its values in the wrong columns).
   * A row's own `error` (from the parser) is always a row error.
   */
  rowProblem?: (row: Row, columns: readonly string[] | null) => string | null | undefined;
}

export type ServiceActionResult =
  | { ok: true; record: MappedRecord; ignored: ReadonlySet<string> }
  | { ok: false; skipped: { actions: "service_actions"; rule: number } }
  | { ok: false; error: { message: string; field?: string } };

export interface ImportMapper<Row extends RowLike> {
  readonly identifier: string;
  /** Every field a mapped record may carry, in a stable order (field_map, field_run, defaults, actions). */
  readonly fields: readonly string[];
  readonly header: BoundFieldMap<Row>;
  readonly hasServiceActions: boolean;
  map(row: Row, line: number): MapResult;
  /**
   * `service_actions` for the planner, after matching: conditions are tested on
   * `serviceRecord` (undefined for a record the service does not hold yet,
   * tested as empty). Returns a new record; the input is not changed.
   */
  applyServiceActions(record: MappedRecord, ignored: ReadonlySet<string>, serviceRecord: Readonly<Record<string, unknown>> | undefined): ServiceActionResult;
}

function describe(err: unknown): RowFailure {
  if (err instanceof RowFailure) return err;
  return new RowFailure(err instanceof Error ? err.message : String(err));
}

function rowError(line: number, failure: RowFailure, identifier?: string): { ok: false; error: RowErrorInfo } {
  const error: RowErrorInfo = { line, message: failure.message };
  if (failure.field !== undefined) error.field = failure.field;
  if (identifier !== undefined) error.identifier = identifier;
  return { ok: false, error };
}

/** The identifier a record carries, trimmed, or undefined when it has none (yet). */
function identifierOf(record: MappedRecord | null, identifier: string): string | undefined {
  const id = record?.[identifier];
  return id === undefined || isBlank(id) ? undefined : id.trim();
}

function compileFieldRun<Row>(config: MappingConfig, known: Set<string>, header: BoundFieldMap<Row>): Array<[string, Template<Row>]> {
  const out: Array<[string, Template<Row>]> = [];
  for (const [field, value] of Object.entries(config.field_run ?? {})) {
    const text = scalarText(value);
    if (text === undefined) {
      throw new ConveyorError("definition_invalid", `field_run.${field}: the value must be text or a number`, {
        details: { field: `field_run.${field}` },
        hint: 'Write a constant ("condition": "New") or a template ("title": "{{brand}} {{model}}").',
      });
    }
    // A template sees the mapped fields and the field_run entries before it, then the file's columns.
    const resolve: NameResolver<Row> = (name) => {
      if (known.has(name)) return fieldReader(name);
      const column = header.column(name);
      return column === null ? null : (_record, row) => (row === undefined ? undefined : column(row));
    };
    out.push([field, compileTemplate(text, resolve, `field_run.${field}`)]);
    known.add(field);
  }
  return out;
}

/**
 * Every field a mapped record of `config` may carry, in the order of
 * `ImportMapper.fields`: field_map, field_run, value_map_default, then what
 * the actions write. Known from the definition alone, before any file is
 * read, so a run can ask the service for its scope while the file downloads.
 */
export function mappedFields(config: MappingConfig): string[] {
  const known = new Set<string>(Object.keys(config.field_map));
  for (const field of Object.keys(config.field_run ?? {})) known.add(field);
  for (const field of Object.keys(config.value_map_default ?? {})) known.add(field);
  for (const field of actionWrites(config.vendor_actions)) known.add(field);
  for (const field of actionWrites(config.service_actions)) known.add(field);
  return [...known];
}

export async function createImportMapper<Row extends RowLike>(config: MappingConfig, source: FieldSource<Row>, options: ImportMapperOptions<Row> = {}): Promise<ImportMapper<Row>> {
  const header = await bindFieldMap(config.field_map, source);
  const known = new Set<string>(header.fields);
  const fieldRun = compileFieldRun(config, known, header);
  const valueMap = compileValueMap(config.value_map);
  const defaults = compileValueDefaults(config.value_map_default);
  for (const field of defaults.fields) known.add(field);
  for (const field of actionWrites(config.vendor_actions)) known.add(field);
  const vendorKnown = new Set(known);
  for (const field of actionWrites(config.service_actions)) known.add(field);

  if (options.type === "orders") checkOrderFields(known);
  const identifier = config.identifier?.trim() || (options.type === "orders" ? "oid" : "guid");
  if (!known.has(identifier)) {
    throw new ConveyorError("definition_invalid", `identifier: "${identifier}" is not set by field_map, field_run, value_map_default or an action, so every row would lack it`, {
      details: { field: "identifier" },
      hint: `Map the column that identifies a record to "${identifier}" in field_map, or set identifier to a mapped field.`,
    });
  }

  const vendorResolve: NameResolver<Row> = (name) => {
    if (vendorKnown.has(name)) return fieldReader(name);
    const column = header.column(name);
    return column === null ? null : (_record, row) => (row === undefined ? undefined : column(row));
  };
  const vendor = compileActions(config.vendor_actions, { key: "vendor_actions", on: "record", resolve: vendorResolve, ...(options.now ? { now: options.now } : {}) });
  // The planner has no source row: service actions read mapped fields only.
  const serviceResolve: NameResolver<Row> = (name) => (known.has(name) ? fieldReader(name) : null);
  const service: CompiledActions<Row> = compileActions(config.service_actions, { key: "service_actions", on: "given", resolve: serviceResolve, ...(options.now ? { now: options.now } : {}) });

  const fields = header.fields;
  const getters = header.getters;
  const count = fields.length;
  const rowProblem = options.rowProblem;
  const columns = header.columns;

  // A row the parser or the width check refused still names its record, as far as its cells can be read: with
  // `remove`, a record the feed names but could not read must not count as one the feed left out.
  const idGetter = getters[fields.indexOf(identifier)];
  const namedBy = (row: Row): string | undefined => {
    try {
      const id = idGetter?.(row);
      return id === undefined || isBlank(id) ? undefined : id.trim();
    } catch {
      return undefined;
    }
  };

  return {
    identifier,
    // The header check passed, so the bound fields are field_map's, and the list is the one known beforehand.
    fields: mappedFields(config),
    header,
    hasServiceActions: !service.empty,
    map(row: Row, line: number): MapResult {
      let record: MappedRecord | null = null;
      try {
        if (row.error !== undefined) return rowError(line, new RowFailure(row.error), namedBy(row));
        if (rowProblem !== undefined) {
          const problem = rowProblem(row, columns);
          if (problem) return rowError(line, new RowFailure(problem), namedBy(row));
        }
        record = newRecord();
        for (let i = 0; i < count; i++) {
          const value = (getters[i] as (row: Row) => string | undefined)(row);
          if (value !== undefined) record[fields[i] as string] = value;
        }
        for (const [field, template] of fieldRun) record[field] = template.constant ?? template.evaluate(record, row);
        valueMap.apply(record);
        defaults.apply(record);
        const state: ActionState = { record, ignored: null };
        if (!vendor.empty) {
          const skippedBy = vendor.apply(state, row);
          if (skippedBy >= 0) {
            const skipped: SkipInfo = { actions: "vendor_actions", rule: skippedBy, line };
            const id = identifierOf(record, identifier);
            if (id !== undefined) skipped.identifier = id;
            return { ok: false, skipped };
          }
        }
        const id = record[identifier];
        if (id === undefined || isBlank(id)) {
          const why = id === undefined ? "missing" : "empty";
          return rowError(line, new RowFailure(`the identifier "${identifier}" is ${why}`, identifier));
        }
        return { ok: true, line, identifier: id.trim(), record, ignored: state.ignored ?? NONE_IGNORED };
      } catch (err) {
        return rowError(line, describe(err), identifierOf(record, identifier));
      }
    },
    applyServiceActions(record, ignored, serviceRecord): ServiceActionResult {
      if (service.empty) return { ok: true, record, ignored };
      const state: ActionState = { record: Object.assign(newRecord(), record), ignored: ignored.size === 0 ? null : new Set(ignored) };
      try {
        const skippedBy = service.apply(state, undefined, serviceRecord);
        if (skippedBy >= 0) return { ok: false, skipped: { actions: "service_actions", rule: skippedBy } };
        return { ok: true, record: state.record, ignored: state.ignored ?? NONE_IGNORED };
      } catch (err) {
        const failure = describe(err);
        return { ok: false, error: failure.field === undefined ? { message: failure.message } : { message: failure.message, field: failure.field } };
      }
    },
  };
}
