import { mkdir, readdir } from "node:fs/promises";
import path from "node:path";
import { parseAutomation, type Automation } from "../../../src/definition/index.js";
import { eachRow, openReader, type ReadOptions } from "../../../src/formats/index.js";
import { runAutomation } from "../../../src/pipeline/run.js";
import type { Order } from "../../../src/service/index.js";
import type { RunRecord } from "../../../src/state/index.js";
import { debugFolder, openSampleEnv, type SampleEnv } from "../../samples/sample-env.js";

/**
 * A worker with the embedded service on a temp folder (the sample
 * environment), plus what export tests need: products put straight into the
 * service's store (10,000 in well under a second), orders created through
 * the v3 API, runs with diff on or off, and delivered files read back through
 * the import readers.
 */
export type ExportEnv = SampleEnv;

export { debugFolder, openSampleEnv as openExportEnv };

export function context(env: ExportEnv): NonNullable<ExportEnv["worker"]["embedded"]>["context"] {
  const ctx = env.worker.embedded?.context;
  if (!ctx) throw new Error("export tests need the embedded service");
  return ctx;
}

/** Products with `guid` and `sku`; one transaction, no log records. */
export function putProducts(env: ExportEnv, products: ReadonlyArray<Record<string, string>>): void {
  const ctx = context(env);
  ctx.db.transaction(() => {
    for (const p of products) {
      const found = ctx.items.find("guid", p.guid ?? "");
      if (found) ctx.items.update({ ...found, ...p, id: found.id, guid: found.guid, sku: p.sku ?? found.sku });
      else ctx.items.insert({ id: "", sku: "", guid: "", ...p });
    }
  })();
}

export async function createOrders(env: ExportEnv, orders: readonly Order[]): Promise<number[]> {
  const oids: number[] = [];
  for (const order of orders) {
    const result = await env.worker.env.client.createOrder(order);
    if (result.oid === undefined) throw new Error(`order not created: ${JSON.stringify(result)}`);
    oids.push(result.oid);
  }
  return oids;
}

export function automation(raw: Record<string, unknown>): Automation {
  const parsed = parseAutomation({ name: "Export test", active: true, schedule: "0 * * * *", type: "products", action: "export", ...raw });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.automation;
}

export function run(env: ExportEnv, a: Automation, options: { mode?: "prod" | "debug"; diff?: boolean; key?: string } = {}): Promise<RunRecord> {
  return runAutomation(env.worker.env, {
    key: options.key ?? a.slug,
    automation: a,
    mode: options.mode ?? "prod",
    trigger: "manual",
    diff: options.diff ?? false,
    force: false,
    notify: false,
    email: null,
  });
}

/** A delivered file read back through the import readers, as records keyed by its own header. */
export async function readBack(file: string, options: ReadOptions = {}): Promise<Record<string, string>[]> {
  const reader = await openReader(file, options);
  try {
    const columns = (await reader.columns()) ?? [];
    const getters = columns.map((c) => [c, reader.accessor(c)] as const);
    const out: Record<string, string>[] = [];
    for await (const row of eachRow(reader)) {
      const record: Record<string, string> = {};
      for (const [c, get] of getters) record[c] = get?.(row) ?? "";
      out.push(record);
    }
    return out;
  } finally {
    await reader.close();
  }
}

/** Names in a folder, `.part` files included: what a partner listing the folder would see. */
export async function listing(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  return (await readdir(dir)).sort();
}

export function debugSource(env: ExportEnv, r: RunRecord, name: string): string {
  return path.join(debugFolder(env, r), "source", name);
}
