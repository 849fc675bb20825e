import type { BuiltInConnection } from "../../connectors/index.js";
import { ACTION_FUNCTIONS, type ActionFunctionName } from "../mapping/action-functions.js";

// The normalized automation: what `parseAutomation` returns and every later
// stage (scheduler, pipeline, daemon) reads. Keys keep the spec's snake_case
// names (automations.md) so a definition, a log line and the code say the same
// thing. Every default of the spec is applied here, so no consumer re-derives one.

export type Scalar = string | number | boolean | null;

/** A registered connector's type (connectors/index.ts lists them). */
export type ConnectionType = BuiltInConnection["type"];

/** A connection as parsed: only the keys of its type are set (connectors/index.ts names the built-in ones). */
export type Connection = BuiltInConnection;

export interface Parameter {
  name: string;
  /** As written; an encrypted parameter holds `enc:v1:…` until `resolveAutomation` decrypts it. */
  value: Scalar;
  description?: string;
  encrypted: boolean;
  label?: string;
  type?: string;
  required: boolean;
  hidden_from_user: boolean;
}

/** `remove_limit` / `error_limit`: an absolute count, or a share of the scope (0.2 for "20%"). */
export type Limit = { kind: "count"; value: number } | { kind: "share"; value: number };

/** One field's change limits (`change_limits`); a check that is off is absent. */
export interface FieldChangeLimit {
  /** The most records whose value may go to zero or empty. */
  zeroed?: Limit;
  /** The most records (`share`) whose numeric value may move by more than `percent` of what it was. */
  moved?: { percent: number; share: Limit };
}

/** Field → its limits, the defaults merged in (change-limits.ts); only fields the file config maps are weighed. */
export type ChangeLimits = Record<string, FieldChangeLimit>;

export type AfterImport = "keep" | "delete" | { move: string };

// The function names live with their implementations; the schema checks against the same list.
export { ACTION_FUNCTIONS, type ActionFunctionName };

/** One function of a rule. `ignoreField` is normalized to `ignoreValue`; field-or-array arguments to `string[]`. */
export type ActionFunction =
  | { name: "setValue"; arg: Record<string, Scalar> }
  | { name: "ignoreValue" | "trim" | "uppercase" | "lowercase"; arg: string[] }
  | { name: "remapField" | "calculate" | "prefix" | "suffix"; arg: Record<string, string> }
  | { name: "replace"; arg: Record<string, [string, string]> }
  | { name: "truncate"; arg: Record<string, number> }
  | { name: "skip"; arg: true };

/** Functions in the order they were written. */
export interface ActionRule {
  search?: string;
  functions: ActionFunction[];
}

export const IMPORT_FORMATS = ["csv", "fixed", "json", "xml", "xlsx", "bulk"] as const;
export const EXPORT_FORMATS = ["csv", "tsv", "json", "jsonl", "xml", "xlsx"] as const;
export type FileFormat = (typeof IMPORT_FORMATS)[number] | (typeof EXPORT_FORMATS)[number];

/** A `field_map` value: a column name / JSONPath / XPath, or `[start, end)` offsets of a fixed-width line. */
export type FieldSource = string | [number, number];

export interface FileConfig {
  /** Import: regular expression over the whole base name (`/…/i` allowed; see `compileNamePattern`); undefined = every file. Export: file name template. */
  name?: string;
  select: "latest" | "new" | "all";
  after_import: AfterImport;
  min_age: number;
  require_file: boolean;
  /** Undefined: the reader infers it from the file's first bytes, then its extension. */
  format?: FileFormat;
  delimiter: string;
  enclosure: string;
  headers?: string[];
  skip_lines: number;
  /** Undefined: UTF-8, a BOM decides when present. */
  encoding?: string;
  sheet?: string | number;
  root?: string;
  jsonpath: boolean;
  xpath: boolean;
  bulk_file: boolean;
  field_map: Record<string, FieldSource>;
  field_run?: Record<string, Scalar>;
  value_map?: Record<string, Scalar | Record<string, Scalar>>;
  value_map_default?: Record<string, Scalar>;
  identifier: string;
  search?: string;
  /** Products: `start`/`add`; orders: `true`. */
  create?: "start" | "add" | true;
  /** Products: `edit`/`relist`; orders: `true`. */
  update?: "edit" | "relist" | true;
  /** Products: `end`/`delete`; orders: `true` (archive). */
  remove?: "end" | "delete" | true;
  remove_limit: Limit;
  error_limit: Limit;
  /** Product imports only (undefined elsewhere): the defaults unless the definition turned them off. */
  change_limits?: ChangeLimits;
  skip_all: boolean;
  diff_update: boolean;
  diff_fields?: string[];
  diff_tolerance: number;
  vendor_actions: ActionRule[];
  service_actions: ActionRule[];
  payload_multi: boolean;
  /** Export: Twig template whose output replaces the built-in format (src/template). */
  template?: string;
  /** Undefined: chosen automatically (order exports whose field_map names `items.` fields). */
  lineitem?: boolean;
  export_empty: boolean;
}

/**
 * A number or boolean field written as a placeholder (`"port": "<<sftp port>>"`).
 * It cannot be typed until the parameters are known, so `parseAutomation`
 * leaves the field at its default and `resolveAutomation` sets it.
 */
export interface DeferredField {
  path: (string | number)[];
  template: string;
  /** `text`: a key with a fixed set of values (select, delimiter, an operation, …), checked once resolved. */
  kind: "number" | "boolean" | "limit" | "text";
}

export interface Automation {
  name: string;
  vendor?: string;
  /** Free text shown with a published automation (the seed's published shape). */
  description?: string;
  slug: string;
  active: boolean;
  draft: boolean;
  /** 5-field cron; absent only when `events` start the automation (it then also runs every CONVEYOR_EVENT_CATCHUP). */
  schedule?: string;
  /** Our extension: the service events (without prefix, e.g. `order.created`) that start this order export. */
  events?: string[];
  timezone: string;
  type: "products" | "orders" | "fitment";
  action: "import" | "export";
  /** Absent only for a run fed by a local file. */
  connection?: Connection;
  file_configs: FileConfig[];
  parameters: Parameter[];
  metadata: Record<string, unknown> | null;
  deferred?: DeferredField[];
}

export interface Problem {
  /** Field path as people write it: `file_configs[0].field_map`; empty for the whole definition. */
  path: string;
  message: string;
  allowed?: string;
}
