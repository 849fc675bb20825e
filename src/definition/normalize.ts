import { normalizeChangeLimits } from "./change-limits.js";
import { slugify } from "./checks.js";
import { normalizeEvents } from "./events.js";
import { SAFE_PRODUCT_OPERATION } from "./rules.js";
import type { RawAutomation } from "./schema.js";
import { normalizeConnection } from "./schema-connection.js";
import type { RawFileConfig } from "./schema-file-config.js";
import type { Automation, FileConfig, FileFormat, Parameter } from "./types.js";

/**
 * Defaults that depend on more than one field (automations.md): select by type,
 * require_file by select, identifier by type, the export file name by slug and
 * format, `true` operations of products, the format implied by jsonpath/xpath/
 * bulk_file/offsets. Runs only on a definition that passed validation.
 */

const EXTENSION: Partial<Record<FileFormat, string>> = { csv: "csv", tsv: "tsv", json: "json", jsonl: "jsonl", xml: "xml", xlsx: "xlsx" };

function impliedFormat(fc: RawFileConfig): FileFormat | undefined {
  if (fc.format) return fc.format as FileFormat;
  if (fc.bulk_file) return "bulk";
  if (fc.jsonpath) return "json";
  if (fc.xpath) return "xml";
  if (Object.values(fc.field_map).some(Array.isArray)) return "fixed";
  return undefined;
}

function operation<K extends "create" | "update" | "remove">(value: unknown, type: Automation["type"], op: K): FileConfig[K] {
  if (value === undefined) return undefined;
  if (type === "orders") return true as FileConfig[K];
  return (value === true ? SAFE_PRODUCT_OPERATION[op] : value) as FileConfig[K];
}

function normalizeFileConfig(fc: RawFileConfig, top: { type: Automation["type"]; action: Automation["action"]; slug: string }): FileConfig {
  const select = fc.select ?? (top.type === "orders" ? "new" : "latest");
  const format = impliedFormat(fc);
  const name = fc.name ?? (top.action === "export" ? `${top.slug}-{{DATETIME}}.${(format && EXTENSION[format]) ?? "csv"}` : undefined);
  const out: FileConfig = {
    ...(name !== undefined ? { name } : {}),
    select,
    after_import: fc.after_import ?? "keep",
    min_age: fc.min_age ?? 30,
    require_file: fc.require_file ?? select !== "new",
    ...(format ? { format } : {}),
    delimiter: fc.delimiter ?? (format === "tsv" ? "\t" : ","),
    enclosure: fc.enclosure ?? '"',
    ...(fc.headers ? { headers: fc.headers } : {}),
    skip_lines: fc.skip_lines ?? 0,
    ...(fc.encoding ? { encoding: fc.encoding } : {}),
    ...(fc.sheet !== undefined ? { sheet: fc.sheet } : {}),
    ...(fc.root ? { root: fc.root } : {}),
    jsonpath: fc.jsonpath ?? false,
    xpath: fc.xpath ?? false,
    bulk_file: fc.bulk_file ?? false,
    field_map: fc.field_map,
    ...(fc.field_run ? { field_run: fc.field_run } : {}),
    ...(fc.value_map ? { value_map: fc.value_map } : {}),
    ...(fc.value_map_default ? { value_map_default: fc.value_map_default } : {}),
    identifier: fc.identifier ?? (top.type === "orders" ? "oid" : "guid"),
    ...(fc.search !== undefined && fc.search.trim() !== "" ? { search: fc.search } : {}),
    remove_limit: fc.remove_limit ?? { kind: "share", value: 0.2 },
    error_limit: fc.error_limit ?? { kind: "share", value: 0.1 },
    // A bulk file is sent as it is, never planned field by field: nothing to weigh.
    ...(top.type === "products" && top.action === "import" && !fc.bulk_file ? { change_limits: normalizeChangeLimits(fc.change_limits) } : {}),
    skip_all: fc.skip_all ?? false,
    diff_update: fc.diff_update ?? false,
    ...(fc.diff_fields ? { diff_fields: fc.diff_fields } : {}),
    diff_tolerance: fc.diff_tolerance ?? 0,
    vendor_actions: fc.vendor_actions ?? [],
    service_actions: fc.service_actions ?? [],
    payload_multi: fc.payload_multi ?? true,
    ...(fc.lineitem !== undefined ? { lineitem: fc.lineitem } : {}),
    export_empty: fc.export_empty ?? false,
    ...(fc.template !== undefined ? { template: fc.template } : {}),
  };
  const create = operation(fc.create, top.type, "create");
  const update = operation(fc.update, top.type, "update");
  const remove = operation(fc.remove, top.type, "remove");
  if (create !== undefined) out.create = create;
  if (update !== undefined) out.update = update;
  if (remove !== undefined) out.remove = remove;
  return out;
}

function normalizeParameter(p: NonNullable<RawAutomation["parameters"]>[number]): Parameter {
  return {
    name: p.name,
    value: p.value ?? null,
    ...(p.description !== undefined ? { description: p.description } : {}),
    encrypted: p.encrypted ?? false,
    ...(p.label !== undefined ? { label: p.label } : {}),
    ...(p.type !== undefined ? { type: p.type } : {}),
    required: p.required ?? true,
    hidden_from_user: p.hidden_from_user ?? false,
  };
}

export function normalizeAutomation(raw: RawAutomation): Automation {
  const type = raw.type as Automation["type"];
  const action = raw.action as Automation["action"];
  const slug = raw.slug ?? slugify(raw.name);
  return {
    name: raw.name,
    ...(raw.vendor !== undefined ? { vendor: raw.vendor } : {}),
    ...(raw.description !== undefined ? { description: raw.description } : {}),
    slug,
    active: raw.active,
    draft: raw.draft ?? false,
    ...(raw.schedule !== undefined ? { schedule: raw.schedule.trim().replace(/\s+/g, " ") } : {}),
    ...(raw.events !== undefined ? { events: normalizeEvents(raw.events) } : {}),
    timezone: raw.timezone ?? "UTC",
    type,
    action,
    ...(raw.connection ? { connection: normalizeConnection(raw.connection, action) } : {}),
    file_configs: raw.file_configs.map((fc) => normalizeFileConfig(fc, { type, action, slug })),
    parameters: (raw.parameters ?? []).map(normalizeParameter),
    metadata: raw.metadata ?? null,
  };
}
