import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";

/**
 * A partner's API on loopback, for the http samples and their tests: OAuth
 * client credentials with expiring tokens, shipments read by page tokens, a
 * report job that is pending for a few polls before it can be downloaded, an
 * order intake that refuses some orders, and a 500 now and then. Everything it
 * serves is built here, small and deterministic.
 *
 *   npm run partner-api            (PARTNER_API_PORT, default 8090)
 */

export interface PartnerProduct {
  sku: string;
  title: string;
  price: string;
  stock: string;
}

export interface PartnerApiOptions {
  /** 0 lets the system pick (tests); the script's default is 8090. */
  port?: number;
  clientId?: string;
  clientSecret?: string;
  /** Seconds a token lives; a request with an older one gets 401. */
  tokenLifetime?: number;
  /** Order ids the shipments answer for, one shipment each, updated an hour apart. */
  shipmentOrderIds?: string[];
  /** Shipments per page. */
  pageSize?: number;
  /** How many polls of a report answer `pending` before it is `done`. */
  reportPolls?: number;
  /** What a report's download holds (CSV). */
  products?: PartnerProduct[];
  /** Orders (by `order_id`) the intake answers 500, every time. */
  failOrders?: string[];
  /** Every Nth order request answers 500 (0: never). */
  failEveryOrder?: number;
  /** Every Nth request to /v1/ answers 500 before anything else (0: never): the 500 now and then. */
  flakyEvery?: number;
}

export interface PartnerApiState {
  /** POST /oauth/token calls, granted or not. */
  tokenRequests: number;
  /** Every request: method, path with query, whether its token was valid. */
  requests: Array<{ method: string; url: string; authorized: boolean }>;
  /** Report id → polls answered. */
  reports: Map<string, number>;
  /** Order bodies the intake accepted, in order. */
  orders: unknown[];
  /** Order requests answered 500. */
  refusedOrders: unknown[];
}

export interface PartnerApi {
  url: string;
  clientId: string;
  clientSecret: string;
  state: PartnerApiState;
  /** Makes every token issued so far expired, as if its lifetime had passed. */
  expireTokens(): void;
  close(): Promise<void>;
}

const START = Date.parse("2026-03-01T08:00:00Z");
const CARRIERS = ["UPS", "DHL", "FedEx"];

export const DEFAULT_PRODUCTS: PartnerProduct[] = [
  { sku: "PA-1001", title: "Pallet jack, 2.5 t", price: "389.00", stock: "4" },
  { sku: "PA-1002", title: "Stretch film, 500 mm, 6 rolls", price: "42.50", stock: "120" },
  { sku: "PA-1003", title: 'Label printer "Z4", thermal', price: "615.00", stock: "0" },
  { sku: "PA-1004", title: "Box cutter, 18 mm", price: "7.90", stock: "310" },
];

export function shipmentsFor(orderIds: readonly string[]): Array<Record<string, string>> {
  return orderIds.map((order_id, i) => {
    const updated = new Date(START + (i + 1) * 3_600_000).toISOString();
    return { order_id, tracking_number: `1Z999AA1${String(1000 + i).padStart(8, "0")}`, carrier: CARRIERS[i % CARRIERS.length] ?? "UPS", shipped_at: updated, updated_at: updated };
  });
}

function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": typeof body === "string" ? "text/csv; charset=utf-8" : "application/json", ...headers }).end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startPartnerApi(options: PartnerApiOptions = {}): Promise<PartnerApi> {
  const clientId = options.clientId ?? "conveyor-demo";
  const clientSecret = options.clientSecret ?? "change-me-client-secret";
  const lifetime = options.tokenLifetime ?? 3600;
  const tokens = new Map<string, number>();
  const state: PartnerApiState = { tokenRequests: 0, requests: [], reports: new Map(), orders: [], refusedOrders: [] };
  let base = "";
  let apiRequests = 0;
  let orderRequests = 0;

  const token = (form: URLSearchParams, res: ServerResponse): void => {
    state.tokenRequests++;
    if (form.get("grant_type") !== "client_credentials" || form.get("client_id") !== clientId || form.get("client_secret") !== clientSecret) {
      send(res, 401, { error: "invalid_client" });
      return;
    }
    const issued = `pt-${randomBytes(12).toString("hex")}`;
    tokens.set(issued, Date.now() + lifetime * 1000);
    send(res, 200, { access_token: issued, token_type: "Bearer", expires_in: lifetime });
  };

  const shipments = (url: URL, res: ServerResponse): void => {
    const since = url.searchParams.get("updated_since") ?? "";
    const all = shipmentsFor(options.shipmentOrderIds ?? ["1001", "1002", "1003"]).filter((s) => (s.updated_at ?? "") > since);
    const offset = Number(Buffer.from(url.searchParams.get("page_token") ?? "", "base64url").toString() || "0");
    const size = options.pageSize ?? 2;
    const next = offset + size < all.length ? Buffer.from(String(offset + size)).toString("base64url") : null;
    send(res, 200, { shipments: all.slice(offset, offset + size), next_page_token: next });
  };

  const report = (id: string, rest: string, res: ServerResponse): void => {
    const polls = state.reports.get(id);
    if (polls === undefined) return send(res, 404, { error: "no such report" });
    if (rest === "/download") {
      const rows = (options.products ?? DEFAULT_PRODUCTS).map((p) => [p.sku, p.title, p.price, p.stock].map(csvCell).join(","));
      return send(res, 200, `sku,title,price,stock\n${rows.join("\n")}\n`, { "content-disposition": `attachment; filename="${id}.csv"` });
    }
    state.reports.set(id, polls + 1);
    if (polls < (options.reportPolls ?? 2)) return send(res, 200, { id, status: "pending" });
    send(res, 200, { id, status: "done", download_url: `${base}/v1/reports/${id}/download` });
  };

  const order = (text: string, res: ServerResponse): void => {
    orderRequests++;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return send(res, 400, { error: "the body is not JSON" });
    }
    const id = body && typeof body === "object" ? String((body as Record<string, unknown>).order_id ?? "") : "";
    const every = options.failEveryOrder ?? 0;
    if ((options.failOrders ?? []).includes(id) || (every > 0 && orderRequests % every === 0)) {
      state.refusedOrders.push(body);
      return send(res, 500, { error: `order ${id} could not be stored, try again` });
    }
    state.orders.push(body);
    send(res, 201, { accepted: id });
  };

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", base);
      const text = await readBody(req);
      if (req.method === "POST" && url.pathname === "/oauth/token") return token(new URLSearchParams(text), res);
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
      const authorized = (tokens.get(bearer) ?? 0) > Date.now();
      state.requests.push({ method: req.method ?? "", url: `${url.pathname}${url.search}`, authorized });
      if (!url.pathname.startsWith("/v1/")) return send(res, 404, { error: "not found" });
      if (!authorized) return send(res, 401, { error: tokens.has(bearer) ? "token expired" : "invalid_token" }, { "www-authenticate": "Bearer" });
      apiRequests++;
      if ((options.flakyEvery ?? 0) > 0 && apiRequests % (options.flakyEvery ?? 1) === 0) return send(res, 500, { error: "temporary failure" });
      if (req.method === "GET" && url.pathname === "/v1/shipments") return shipments(url, res);
      if (req.method === "POST" && url.pathname === "/v1/reports") {
        const id = `rep-${state.reports.size + 1}`;
        state.reports.set(id, 0);
        return send(res, 202, { id, status: "pending" }, { location: `${base}/v1/reports/${id}` });
      }
      const reportPath = /^\/v1\/reports\/([\w-]+)(\/download)?$/.exec(url.pathname);
      if (req.method === "GET" && reportPath) return report(reportPath[1] ?? "", reportPath[2] ?? "", res);
      if (req.method === "POST" && url.pathname === "/v1/orders") return order(text, res);
      send(res, 404, { error: "not found" });
    })().catch((err: unknown) => res.destroy(err instanceof Error ? err : new Error(String(err))));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    clientId,
    clientSecret,
    state,
    expireTokens: () => {
      for (const t of tokens.keys()) tokens.set(t, 0);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const api = await startPartnerApi({ port: Number(process.env.PARTNER_API_PORT ?? 8090), reportPolls: 2, flakyEvery: 7 });
  process.stdout.write(`Partner API stand-in on ${api.url}\nOAuth: POST ${api.url}/oauth/token  client_id=${api.clientId}  client_secret=${api.clientSecret}\n`);
  process.stdout.write(`Try: conveyor run samples/report-job-http.json --debug --param "partner url=${api.url}"\n`);
}
