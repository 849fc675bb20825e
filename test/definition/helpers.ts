import { parseAutomation, type Automation, type Problem } from "../../src/definition/index.js";

/** Valid definitions to start a test from; each test changes one thing. */

export type Def = Record<string, unknown>;

export function productImport(): Def {
  return {
    name: "Acme inventory",
    active: 1,
    schedule: "*/30 * * * *",
    type: "products",
    action: "import",
    connection: { type: "sftp", address: "sftp.acme.test", username: "acme", password: "<<sftp password>>", path: "/outgoing" },
    file_configs: [{ name: "inventory_\\d+\\.csv", field_map: { sku: "Item Number", stock: "Qty" }, identifier: "sku", update: "edit" }],
    parameters: [{ name: "sftp password", value: "not-a-real-password" }],
  };
}

export function orderExport(): Def {
  return {
    name: "Orders to 3PL",
    active: true,
    schedule: "0 * * * *",
    type: "orders",
    action: "export",
    connection: { type: "sdsftp", path: "exports/orders" },
    file_configs: [{ field_map: { oid: "Order", "items.sku": "SKU" }, search: "archived:=0" }],
  };
}

export function fc(def: Def, i = 0): Def {
  const list = def.file_configs as Def[];
  const entry = list[i];
  if (!entry) throw new Error(`no file_configs[${i}]`);
  return entry;
}

export function conn(def: Def): Def {
  return def.connection as Def;
}

export function problemsOf(def: unknown): Problem[] {
  const r = parseAutomation(def);
  return r.ok ? [] : r.problems;
}

export function parsed(def: unknown): Automation {
  const r = parseAutomation(def);
  if (!r.ok) throw new Error(`expected a valid definition, got:\n${r.problems.map((p) => `${p.path}: ${p.message}`).join("\n")}`);
  return r.automation;
}
