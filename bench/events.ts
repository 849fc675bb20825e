/**
 * Runs on events benchmark (issue 30): the order-created sample, the daemon
 * in its own process, the service in another (as a shop's remote service is;
 * `--embedded` runs it inside the daemon, the embedded default, where the
 * shop's order load shares the daemon's loop), the partner API stand-in in
 * this one. 1,000 orders are placed one by one through `POST /v3/orders`
 * at 100 a second; each order's latency is from the POST's answer to the
 * partner's receipt of it.
 *
 *   npm run bench:events [-- --orders 1000 --rate 100 --window 5s --embedded]
 *
 * Targets: p95 ≤ window + 5 s, every order once (0 duplicates, 0 missing),
 * runs < orders. Exits 1 when an order is missing or sent twice, 2 when only
 * a latency or run-count target is missed.
 */
import { parseArgs } from "node:util";
import { parseDuration } from "../src/duration.js";
import { percentile, runBurst } from "../test/events/burst-driver.js";

const { values } = parseArgs({ options: { orders: { type: "string", default: "1000" }, rate: { type: "string", default: "100" }, window: { type: "string", default: "5s" }, embedded: { type: "boolean", default: false } } });
const orders = Number(values.orders);
const rate = Number(values.rate);
const windowMs = parseDuration(values.window);

const r = await runBurst({ orders, perSecond: rate, window: values.window, settleMs: 120_000, serviceProcess: !values.embedded });
const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const p50 = percentile(r.latenciesMs, 0.5);
const p95 = percentile(r.latenciesMs, 0.95);
const max = r.latenciesMs.at(-1) ?? Number.NaN;
const runs = r.eventRuns + r.otherRuns;
const latencyOk = p95 <= windowMs + 5_000;
const onceOk = r.duplicates.length === 0 && r.missing.length === 0;
const runsOk = runs < orders;

console.log(`orders placed        ${r.created} in ${s(r.createdMs)} (asked: ${rate}/s, held: ${(r.created / (r.createdMs / 1000)).toFixed(1)}/s)`);
console.log(`window               ${values.window}; service ${values.embedded ? "embedded in the daemon" : "in its own process"}`);
console.log(`latency p50          ${s(p50)}`);
console.log(`latency p95          ${s(p95)}   target ≤ ${s(windowMs + 5_000)}  ${latencyOk ? "ok" : "MISSED"}`);
console.log(`latency max          ${s(max)}`);
console.log(`runs                 ${runs} (event ${r.eventRuns}, of which empty ${r.emptyRuns}; other ${r.otherRuns}; failed ${r.failedRuns.length})   target < ${orders}  ${runsOk ? "ok" : "MISSED"}`);
console.log(`delivered once       ${r.delivered}`);
console.log(`duplicates           ${r.duplicates.length}   target 0  ${r.duplicates.length === 0 ? "ok" : "MISSED"}`);
console.log(`missing              ${r.missing.length}   target 0  ${r.missing.length === 0 ? "ok" : "MISSED"}`);
console.log(`first POST to last receipt ${s(r.elapsedMs)}`);
if (!onceOk) {
  console.error(`an order was missed or sent twice: missing ${r.missing.slice(0, 10).join(", ")}; twice ${r.duplicates.slice(0, 10).join(", ")}`);
  process.exit(1);
}
if (!latencyOk || !runsOk) process.exit(2);
