/**
 * Step 2 of an export run (runs.md): the service records that go out, as a
 * stream. Products come from one bulk export of only the fields the mapping
 * and the actions read; orders page by page through `GET /v3/orders`
 * (orders.ts; an event run asks only for the events' orders); fitment is the products in scope, one row per vehicle
 * entry of their `fitment` field (a JSON array of vehicle objects whose keys
 * become `fitment.<key>`: `fitment.year`, `fitment.make`, …).
 *
 * @module
 */

import type { Automation, FileConfig } from "../../definition/index.js";
import type { ServiceClient } from "../../service/index.js";
import { selectOrders } from "./orders.js";
import type { Selected } from "./selected.js";

/** The product field that holds a part's vehicles. */
export const FITMENT_FIELD = "fitment";

export interface SelectInput {
  automation: Automation;
  config: FileConfig;
  client: ServiceClient;
  /** `mapper.reads`: service fields the mapping and the actions need ("*" = all). */
  reads: readonly string[];
  identifier: string;
  signal?: AbortSignal;
  /** An event run of an order export: the events' orders, the only ones it reads. */
  orders?: readonly string[];
}

/** The fields to ask the service for; an empty list asks for every field. */
export function exportFields(reads: readonly string[], type: Automation["type"]): string[] {
  if (reads.includes("*")) return [];
  if (type !== "fitment") return [...reads];
  const fields = reads.filter((f) => !f.startsWith(`${FITMENT_FIELD}.`));
  if (!fields.includes(FITMENT_FIELD)) fields.push(FITMENT_FIELD);
  return fields;
}

/** Order exports are in line-item form when `lineitem` says so, or, unset, when the mapping names item fields. */
export function wantsLineItems(config: FileConfig, reads: readonly string[]): boolean {
  return config.lineitem ?? reads.some((f) => f.startsWith("items."));
}

/**
 * The selection a page at a time: an async generator step per row cost a
 * million-row export about a second in promise round trips. Orders come a
 * few at a time anyway and go out as they come.
 */
export function select(input: SelectInput): AsyncGenerator<Selected[]> {
  if (input.automation.type === "orders") return onePerPage(selectOrders(input.client, { search: input.config.search, lineitem: wantsLineItems(input.config, input.reads), signal: input.signal, only: input.orders }));
  return selectProducts(input);
}

async function* onePerPage(rows: AsyncGenerator<Selected>): AsyncGenerator<Selected[]> {
  for await (const row of rows) yield [row];
}

async function* selectProducts(input: SelectInput): AsyncGenerator<Selected[]> {
  const { identifier } = input;
  const fitment = input.automation.type === "fitment";
  const pages = input.client.exportRecordPages({
    type: "items",
    ...(input.config.search ? { search: input.config.search } : {}),
    fields: exportFields(input.reads, input.automation.type),
    ...(input.signal ? { signal: input.signal } : {}),
  });
  for await (const products of pages) {
    const page: Selected[] = [];
    for (const product of products) {
      const id = product[identifier] ?? product.guid ?? "";
      if (!fitment) page.push({ kind: "row", record: product, key: id, group: id });
      else for (const row of vehicleRows(product, id)) page.push(row);
    }
    yield page;
  }
}

/** One row per vehicle; an entry that is no object, or a value that is no JSON array, is a problem of that product. */
export function* vehicleRows(product: Record<string, string>, id: string): Generator<Selected> {
  const text = (product[FITMENT_FIELD] ?? "").trim();
  if (text === "") return;
  let vehicles: unknown;
  try {
    vehicles = JSON.parse(text);
  } catch (err) {
    yield { kind: "problem", identifier: id, message: `${FITMENT_FIELD} is not JSON (${(err as Error).message}); write a JSON array of vehicles such as [{"year":"2019","make":"Ford","model":"F-150"}]` };
    return;
  }
  if (!Array.isArray(vehicles)) {
    yield { kind: "problem", identifier: id, message: `${FITMENT_FIELD} must be a JSON array of vehicle objects, not ${vehicles === null ? "null" : typeof vehicles}` };
    return;
  }
  for (const [i, vehicle] of vehicles.entries()) {
    if (typeof vehicle !== "object" || vehicle === null || Array.isArray(vehicle)) {
      yield { kind: "problem", identifier: id, message: `${FITMENT_FIELD}[${i}] is not a vehicle object ({"year":…, "make":…, "model":…})` };
      continue;
    }
    const record: Record<string, unknown> = { ...product };
    for (const [k, v] of Object.entries(vehicle as Record<string, unknown>)) record[`${FITMENT_FIELD}.${k}`] = v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
    const key = `${id}#${i + 1}`;
    yield { kind: "row", record, key, group: key };
  }
}
