import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "../embedded/helpers.js";
import { bodyOf, deep, FuzzTally, junk, leaf, nestText, oddKey, oddString, type Json } from "./fuzz-inputs.js";
import { errorCapture, queryOf, rawBody, segment, send, sortKey, statusLines, type FuzzRequest, type Sender } from "./fuzz-http.js";

/**
 * Issue #24: generated bodies against the embedded service on loopback: item
 * form posts, orders (single and `{header, data}` bodies, update, archive,
 * combine, split), webhook endpoints and the log search, plus the searches
 * in paths and queries. Every answer is below 500 and the service keeps
 * answering. Bounded by count and by time.
 */

const ITEM_KEYS = ["identifier", "guid", "sku", "id", "title", "stock", "price", "cost", "brand", "listed"];
const ORDER_KEYS = ["oid", "order", "ordernumber", "channel", "status", "email", "total", "currency", "gift", "archived", "billing", "shipping", "items", "shipments", "refunds", "details", "meta", "internalnotes", "shipitems", "shipsku", "shipquantity", "refunditems", "date", "payment"];
const LOG_KEYS = ["start", "records", "identifier", "context", "integration", "instance", "request_id", "timestamp_start", "timestamp_end", "id", "channel_id", "action", "operation", "method", "type", "result", "job_id"];
const WEBHOOK_KEYS = ["url", "description", "event_types", "enabled"];
/** Never a receiver off this machine: a generated https URL to any host is replaced by a closed loopback port. */
const LOOPBACK_RECEIVER = "http://127.0.0.1:9/hook";

let h: Harness;
const tally = new FuzzTally("embedded service");
const statuses = new Map<string, number>();
let sender: Sender;
let oid = 0;
let endpointId = "ep_0";

beforeAll(async () => {
  const errors = errorCapture();
  h = await startHarness({ logger: errors.logger });
  sender = { base: h.svc.url, headers: { "X-Auth-User": h.svc.apiUser, "X-Auth-Token": h.svc.apiToken }, tally, statuses, lastError: errors.last };
  const order = await h.json("POST", "/v3/orders", { ordernumber: "FUZZ-1", channel: "web", total: 11, items: [{ sku: "A1", quantity: 2, price: 3 }, { sku: "B2", quantity: 1, price: 5 }] });
  oid = Number(order.body.oid);
  expect(oid).toBeGreaterThan(0);
  const endpoint = await h.json("POST", "/v3/webhooks/endpoints", { url: LOOPBACK_RECEIVER, event_types: ["order.created"], enabled: false });
  endpointId = String(endpoint.body.id);
  await h.form("/v1/editor/items/add", { guid: "g-A1", sku: "A1", title: "Alpha" });
});

afterAll(async () => {
  console.log(`${tally.report()}\n${statusLines(statuses)}`);
  await h?.close();
});

function loopbackOnly(body: Json): Json {
  if (body === null || typeof body !== "object" || Array.isArray(body) || body.url === undefined) return body;
  return { ...body, url: typeof body.url === "string" && /^https?:/i.test(body.url.trim()) ? LOOPBACK_RECEIVER : body.url };
}

const orderLine = bodyOf(["itemid", "sku", "title", "price", "quantity", "weight", "source"]);
/** An order the service accepts, with odd values and keys mixed in, so updates and archives find real orders. */
const nearOrder = fc.tuple(
  fc.record({ ordernumber: fc.oneof(fc.uuid(), oddString), channel: fc.constantFrom("web", "amazon", ""), total: fc.oneof(fc.nat(500), leaf), items: fc.array(fc.record({ sku: fc.oneof(fc.constantFrom("A1", "B2"), oddString), quantity: fc.oneof(fc.nat(5), leaf), price: fc.oneof(fc.nat(100), leaf) }), { minLength: 1, maxLength: 3 }) }),
  fc.option(fc.dictionary(fc.constantFrom(...ORDER_KEYS), leaf, { maxKeys: 2 })),
).map(([order, extra]) => ({ ...extra, ...order }));

const orderBody = fc.oneof(
  { weight: 2, arbitrary: nearOrder },
  { weight: 3, arbitrary: bodyOf(ORDER_KEYS, fc.oneof(leaf, fc.array(orderLine, { maxLength: 3 }), bodyOf(["city", "country", "firstname", "postalcode"]))) },
  { weight: 2, arbitrary: fc.record({ header: fc.array(fc.oneof(fc.constantFrom("order", "oid", "sku", "items.sku", "items.quantity", "billing.city", "status", "channel"), oddString), { maxLength: 5 }), data: fc.array(fc.array(leaf, { maxLength: 6 }), { maxLength: 4 }) }) },
  { weight: 1, arbitrary: junk(4) },
);

/** A bulk upload: a CSV whose header and rows mix real item columns with odd ones, or not a CSV at all. */
const bulkUpload = fc
  .tuple(
    fc.tuple(fc.constantFrom("action", "action", "Action", ""), fc.oneof(fc.constantFrom("guid", "sku", "id"), oddString), fc.array(fc.oneof(fc.constantFrom(...ITEM_KEYS), oddString), { maxLength: 4 })).map(([a, id, rest]) => [a, id, ...rest]),
    fc.array(fc.array(fc.oneof(fc.constantFrom("add", "edit", "delete", "g-A1", "A1"), oddString), { maxLength: 5 }), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom("bulk_name", "bulk_email", "skip_all"), oddString, { maxKeys: 3 }),
    fc.constantFrom("bulk_file", "bulk_file", "file", ""),
    fc.constantFrom(",", ";", "\t", '"'),
  )
  .map(([header, rows, multipart, field, sep]) => ({ multipart, file: { field, name: "items.csv", content: [header, ...rows].map((r) => r.join(sep)).join("\n") } }));

function requests(): fc.Arbitrary<FuzzRequest> {
  const orderId = fc.oneof({ weight: 4, arbitrary: fc.constant(String(oid)) }, { weight: 1, arbitrary: fc.constantFrom("FUZZ-1", "lineitem", "shipped", "web") }, { weight: 2, arbitrary: oddString.map(segment) });
  const itemForm = fc.dictionary(fc.oneof(fc.constantFrom(...ITEM_KEYS), oddKey), oddString, { maxKeys: 6 });
  const action = fc.oneof({ weight: 5, arbitrary: fc.constantFrom("add", "edit", "start", "relist", "end", "delete") }, { weight: 1, arbitrary: oddString.map(segment) });
  const hook = fc.oneof({ weight: 4, arbitrary: fc.constant(endpointId) }, { weight: 1, arbitrary: oddString.map(segment) });
  return fc.oneof(
    fc.tuple(action, itemForm).map(([a, form]) => ({ route: "POST item (form)", method: "POST", path: `/v1/editor/items/${a}`, body: { form } })),
    fc.tuple(action, bodyOf(ITEM_KEYS)).map(([a, json]) => ({ route: "POST item (json)", method: "POST", path: `/v1/editor/items/${a}`, body: { json } })),
    fc.oneof(orderBody.map((json) => ({ json })), rawBody).map((body) => ({ route: "POST orders", method: "POST", path: "/v3/orders", body })),
    fc.tuple(fc.constantFrom("PATCH", "DELETE"), fc.option(orderId), orderBody).map(([method, id, json]) => ({ route: `${method} orders`, method, path: `/v3/orders${id === null ? "" : `/${id}`}`, body: { json } })),
    fc.tuple(fc.constantFrom("combine", "split"), bodyOf(["oid", "oidconsolidate", "itemids"], fc.oneof(leaf, fc.constant(oid), fc.array(fc.oneof(leaf, fc.constant(oid)), { maxLength: 3 })))).map(([op, json]) => ({ route: `POST orders/${op}`, method: "POST", path: `/v3/orders/${op}`, body: { json } })),
    fc.tuple(fc.option(orderId), queryOf(["page", "sort", "sortorder", "q", "lineitem", "lineitem_filter"])).map(([id, query]) => ({ route: "GET orders", method: "GET", path: `/v3/orders${id === null ? "" : `/${id}`}`, query })),
    fc.tuple(sortKey(["oid", "ordernumber", "channel", "date", "total", "status", "email"]), fc.constantFrom("asc", "desc")).map(([sort, sortorder]) => ({ route: "GET orders sort", method: "GET", path: "/v3/orders", query: { sort, sortorder } })),
    fc.tuple(sortKey(["id", "sku", "guid", "stock", "price", "title", "date"]), fc.constantFrom("", "_")).map(([sort, down]) => ({ route: "GET items sort", method: "GET", path: "/v1/editor/items", query: { sort: `${sort}${down}` } })),
    fc.tuple(oddString, queryOf(["page", "sort"])).map(([q, query]) => ({ route: "GET item search", method: "GET", path: `/v1/search/items/${segment(q)}`, query })),
    bodyOf(WEBHOOK_KEYS, fc.oneof(leaf, fc.array(fc.oneof(fc.constantFrom("order.created", "order.updated", "com.example.order.created"), oddString), { maxLength: 3 }))).map((json) => ({ route: "POST webhook", method: "POST", path: "/v3/webhooks/endpoints", body: { json: loopbackOnly(json) } })),
    fc.tuple(hook, bodyOf(WEBHOOK_KEYS)).map(([id, json]) => ({ route: "PATCH webhook", method: "PATCH", path: `/v3/webhooks/endpoints/${id}`, body: { json: loopbackOnly(json) } })),
    fc.tuple(hook, queryOf(["status", "event_type", "before", "after", "limit", "offset"])).map(([id, query]) => ({ route: "GET webhook logs", method: "GET", path: `/v3/webhooks/endpoints/${id}/logs`, query })),
    bodyOf(["type", "search", "fields"], fc.oneof(fc.constantFrom("items", "orders"), leaf)).map((json) => ({ route: "POST bulk export", method: "POST", path: "/v1/bulk/exports", body: { json } })),
    fc.dictionary(fc.oneof(fc.constantFrom("user", "pass"), oddKey), oddString, { maxKeys: 3 }).map((form) => ({ route: "POST auth", method: "POST", path: "/v1/auth", body: { form } })),
    fc.tuple(fc.constantFrom("/v3/logs", "/v1/logs"), queryOf(LOG_KEYS), bodyOf(LOG_KEYS)).map(([path, query, json]) => ({ route: `POST ${path}`, method: "POST", path, query, body: { json } })),
  );
}

describe("fuzz: embedded service bodies", () => {
  it("answers every generated request below 500", async () => {
    await fc.assert(
      fc.asyncProperty(requests(), async (r) => {
        await send(sender, r);
      }),
      { numRuns: 5_000, interruptAfterTimeLimit: 20_000 },
    );
    expect(tally.inputs).toBeGreaterThan(300);
    expect(tally.failures).toEqual([]);
  });

  // An upload is written to disk and inspected before it is answered (about 0.1 s each), so it gets its own, smaller budget.
  it("answers every generated bulk upload below 500", async () => {
    const before = tally.failures.length;
    await fc.assert(
      fc.asyncProperty(bulkUpload, async (body) => {
        await send(sender, { route: "POST bulk upload", method: "POST", path: "/v1/bulk", body });
      }),
      { numRuns: 80, interruptAfterTimeLimit: 10_000 },
    );
    expect(tally.failures.slice(before)).toEqual([]);
  });

  // Until the JSON depth limits of issue #24 are in, POST /v3/orders answers these with 500 (Maximum call stack size exceeded).

  it("answers bodies nested thousands deep below 500", async () => {
    const before = tally.failures.length;
    await fc.assert(
      fc.asyncProperty(deep, fc.constantFrom("/v3/orders", "/v3/webhooks/endpoints", "/v3/logs", `/v3/orders/combine`), async (d, path) => {
        const raw = `{"ordernumber":"DEEP","channel":"web","total":1,"items":${nestText(d)}}`;
        await send(sender, { route: `POST ${path} (deep)`, method: "POST", path, body: { raw, type: "application/json" } });
      }),
      { numRuns: 40, interruptAfterTimeLimit: 10_000 },
    );
    expect(tally.failures.slice(before)).toEqual([]);
  });

  it("is still up and serving after the fuzz", async () => {
    const res = await h.json("GET", `/v3/orders/${oid}`);
    expect(res.status).toBe(200);
    expect((await h.json("GET", "/v3/webhooks/endpoints")).status).toBe(200);
  });
});
