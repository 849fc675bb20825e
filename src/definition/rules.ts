import { changeLimitRules } from "./change-limits.js";
import { checkNamePattern, checkSearch, checkTimezone } from "./checks.js";
import { CRON_ALLOWED, checkCron } from "./cron.js";
import { eventRules } from "./events.js";
import { definitionPathProblems } from "./path-rules.js";
import { hasPlaceholder } from "./placeholders.js";
import { capabilityRules } from "./capabilities.js";
import { connectionRules } from "./schema-connection.js";
import { describeValue, isRecord, type Add } from "./schema-common.js";
import { FILE_CONFIG_KEYS_IMPORT_ONLY } from "./schema-file-config.js";
import { EXPORT_FORMATS, IMPORT_FORMATS } from "./types.js";
import { checkTemplateText, TEMPLATE_ALLOWED } from "../template/compile.js";

/**
 * Rules across fields (automations.md). They run even when some fields failed
 * their own checks, so every value is read as `unknown` and a rule only speaks
 * when the fields it needs are well formed: one mistake gives one problem.
 */

export const PRODUCT_OPERATIONS = {
  create: ["start", "add"],
  update: ["edit", "relist"],
  remove: ["end", "delete"],
} as const;
const OPERATIONS = ["create", "update", "remove"] as const;
/** `true` for products means the safe choice (automations.md): create without listing, edit, end listings. */
export const SAFE_PRODUCT_OPERATION = { create: "add", update: "edit", remove: "end" } as const;

/** A text check that a placeholder would hide is left to `resolveAutomation`. */
function checkText(value: unknown, check: (text: string) => string | null, add: Add, path: (string | number)[], allowed?: string): void {
  if (typeof value !== "string" || hasPlaceholder(value)) return;
  const wrong = check(value);
  if (wrong) add(path, wrong, allowed);
}

function operationRules(fc: Record<string, unknown>, type: unknown, at: (string | number)[], add: Add): void {
  for (const op of OPERATIONS) {
    const value = fc[op];
    if (value === undefined) continue;
    if (type === "orders" && value !== true) {
      add([...at, op], `orders take ${op}: true`, "true");
    } else if (type === "products" && value !== true && !(PRODUCT_OPERATIONS[op] as readonly unknown[]).includes(value)) {
      add([...at, op], `${describeValue(value)} is not a product ${op} action`, `${PRODUCT_OPERATIONS[op].join(", ")}, or true (= ${SAFE_PRODUCT_OPERATION[op]})`);
    }
  }
}

function fieldMapRules(fc: Record<string, unknown>, action: unknown, at: (string | number)[], add: Add): void {
  const map = fc.field_map;
  if (!isRecord(map)) return;
  const values = Object.values(map);
  const offsets = values.filter(Array.isArray).length;
  const bulk = fc.bulk_file === true;
  if (values.length === 0 && !bulk) add([...at, "field_map"], "maps no field", 'at least one service field → source, e.g. {"sku": "Item Number"}');
  if (offsets > 0 && action === "export") add([...at, "field_map"], "[start, end] offsets are for reading fixed-width files", "output column names");
  else if (offsets > 0 && offsets < values.length) add([...at, "field_map"], "mixes [start, end] offsets and column names", "all values [start, end] (fixed-width) or all names");
  else if (offsets > 0 && (fc.jsonpath === true || fc.xpath === true)) add([...at, "field_map"], "[start, end] offsets cannot be JSONPath or XPath expressions", "jsonpath/xpath off for fixed-width files");
  else if (offsets > 0 && fc.format !== undefined && fc.format !== "fixed") add([...at, "format"], `[start, end] offsets in field_map need format "fixed", not ${describeValue(fc.format)}`, "fixed");
  if (fc.format === "fixed" && action === "import" && offsets === 0 && values.length > 0) add([...at, "field_map"], "a fixed-width file is mapped with [start, end] offsets", "[start, end] per field, e.g. [0, 12]");
}

const BULK_FILE_UNUSED = ["field_map", "field_run", "value_map", "value_map_default", "vendor_actions", "service_actions", "create", "update", "remove", "change_limits"] as const;

function readerRules(fc: Record<string, unknown>, at: (string | number)[], add: Add): void {
  const format = fc.format;
  if (fc.jsonpath === true && fc.xpath === true) add([...at, "xpath"], "jsonpath and xpath cannot both be on", "one of them");
  if (fc.jsonpath === true && format !== undefined && format !== "json") add([...at, "jsonpath"], `JSONPath needs format json, not ${describeValue(format)}`, "json");
  if (fc.xpath === true && format !== undefined && format !== "xml") add([...at, "xpath"], `XPath needs format xml, not ${describeValue(format)}`, "xml");
  if (fc.bulk_file === true && (fc.jsonpath === true || fc.xpath === true || (format !== undefined && format !== "bulk"))) {
    add([...at, "bulk_file"], "a bulk file is sent as it is: no format, jsonpath or xpath", "bulk_file alone (format bulk)");
  }
  if (fc.bulk_file === true) {
    // Sent as it is, without mapping: a key that maps or decides an operation would silently do nothing.
    for (const key of BULK_FILE_UNUSED) {
      const value = fc[key];
      if (value === undefined || (isRecord(value) && Object.keys(value).length === 0) || (Array.isArray(value) && value.length === 0)) continue;
      add([...at, key], `a bulk file is sent as it is, so "${key}" would do nothing: its action column says what each row does`, "bulk_file alone, or bulk_file: 0 with field_map");
    }
  }
  if (fc.sheet !== undefined && format !== undefined && format !== "xlsx") add([...at, "sheet"], `sheet applies to xlsx files, not ${describeValue(format)}`);
  if (fc.root !== undefined && format !== undefined && format !== "json" && format !== "xml") add([...at, "root"], `root applies to json and xml files, not ${describeValue(format)}`);
}

function fileConfigRules(fc: Record<string, unknown>, top: Record<string, unknown>, at: (string | number)[], add: Add): void {
  const { action, type } = top;
  if (action === "export") {
    for (const key of FILE_CONFIG_KEYS_IMPORT_ONLY) {
      if (fc[key] !== undefined) add([...at, key], `"${key}" applies to imports only`);
    }
    if (typeof fc.format === "string" && !(EXPORT_FORMATS as readonly string[]).includes(fc.format)) add([...at, "format"], `"${fc.format}" is not an export format`, EXPORT_FORMATS.join(", "));
    // Not checkText: every Twig template has `{{ }}`, which is no placeholder here.
    const wrong = typeof fc.template === "string" ? checkTemplateText(fc.template) : null;
    if (wrong) add([...at, "template"], wrong, TEMPLATE_ALLOWED);
  } else if (action === "import") {
    // Pointers are read from the records a pass maps; a bulk file goes to the service unread.
    if (fc.bulk_file === true && isRecord(top.connection) && top.connection.pointers !== undefined) {
      add([...at, "bulk_file"], "a bulk file is sent as it is, unread, so connection.pointers would never move", "bulk_file: 0 with field_map, or no pointers");
    }
    if (fc.bulk_file === true && type !== "products") add([...at, "bulk_file"], `a service bulk file holds products, not ${describeValue(type)}`, "bulk_file with type products");
    if (fc.bulk_file !== true && OPERATIONS.every((op) => fc[op] === undefined)) {
      add(at, "an import needs at least one of create, update, remove", type === "orders" ? "create: true, update: true, remove: true" : "create: start|add, update: edit|relist, remove: end|delete");
    }
    if (typeof fc.format === "string" && !(IMPORT_FORMATS as readonly string[]).includes(fc.format)) add([...at, "format"], `"${fc.format}" is not an import format`, IMPORT_FORMATS.join(", "));
    if (fc.export_empty !== undefined) add([...at, "export_empty"], `"export_empty" applies to exports only`);
    if (fc.template !== undefined) add([...at, "template"], `"template" applies to exports only: an import reads files with format, jsonpath or xpath`, "template in an export's file_configs");
    changeLimitRules(fc, type, at, add);
    checkText(fc.name, checkNamePattern, add, [...at, "name"], "a regular expression over the whole file name, e.g. inventory_\\d+\\.csv or /inventory.*\\.csv/i");
    const identifier = fc.identifier ?? (type === "orders" ? "oid" : "guid");
    const mapped = [...Object.keys(isRecord(fc.field_map) ? fc.field_map : {}), ...Object.keys(isRecord(fc.field_run) ? fc.field_run : {})];
    if (fc.bulk_file !== true && isRecord(fc.field_map) && typeof identifier === "string" && mapped.length > 0 && !mapped.includes(identifier)) {
      add([...at, "identifier"], `the identifier "${identifier}" is not mapped: every row would lack it`, `a key of field_map or field_run: ${mapped.join(", ")}`);
    }
  }
  if (fc.lineitem !== undefined && !(type === "orders" && action === "export")) add([...at, "lineitem"], "lineitem applies to order exports only");
  operationRules(fc, type, at, add);
  fieldMapRules(fc, action, at, add);
  readerRules(fc, at, add);
  checkText(fc.search, checkSearch, add, [...at, "search"]);
  for (const list of ["vendor_actions", "service_actions"]) {
    const rules = fc[list];
    if (!Array.isArray(rules)) continue;
    rules.forEach((rule: unknown, r) => {
      if (isRecord(rule)) checkText(rule.search, checkSearch, add, [...at, list, r, "search"]);
    });
  }
}

function parameterRules(params: unknown, add: Add): void {
  if (!Array.isArray(params)) return;
  const seen = new Map<string, number>();
  params.forEach((p: unknown, i) => {
    if (!isRecord(p) || typeof p.name !== "string") return;
    if (/[<>{}]/.test(p.name)) add(["parameters", i, "name"], `"${p.name}" cannot be used as a placeholder`, "a name without < > { }; spaces are fine");
    const first = seen.get(p.name);
    if (first !== undefined) add(["parameters", i, "name"], `duplicate parameter "${p.name}" (also parameters[${first}])`, "unique names");
    else seen.set(p.name, i);
  });
}

/** Every rule across fields; `top` is the whole definition, possibly partly invalid. */
export function crossFieldRules(top: Record<string, unknown>, add: Add): void {
  if (top.type === "fitment" && top.action === "import") add(["type"], "fitment is for exports only", "products or orders for an import");
  if (isRecord(top.connection)) connectionRules(top.connection, top.action, add);
  capabilityRules(top, add);
  checkText(top.schedule, checkCron, add, ["schedule"], CRON_ALLOWED);
  eventRules(top, add);
  checkText(top.timezone, checkTimezone, add, ["timezone"], "an IANA zone such as UTC, Europe/Berlin, America/New_York");
  if (Array.isArray(top.file_configs)) {
    top.file_configs.forEach((fc: unknown, i) => {
      if (isRecord(fc)) fileConfigRules(fc, top, ["file_configs", i], add);
    });
  }
  parameterRules(top.parameters, add);
  for (const p of definitionPathProblems(top)) add(p.path, p.message, p.allowed);
}
