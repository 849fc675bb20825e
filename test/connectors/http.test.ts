import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { HttpConnector } from "../../connectors/http.js";
import { httpSpec } from "../../connectors/http-spec.js";
import { completeConnector } from "../../connectors/index.js";
import type { HttpConnectorOptions } from "../../connectors/http-exchange.js";
import { isPrivateAddress } from "../../connectors/net-guard.js";
import type { ConnectionConfig } from "../../connectors/types.js";
import { FeedServer } from "../helpers/http-feed-server.js";
import { memoryContext, type TestContext } from "../helpers/memory-context.js";
import { caught } from "../helpers/caught.js";

const fast = { retry: { baseDelayMs: 5, maxDelayMs: 10 }, timeoutMs: 2_000 };
const server = new FeedServer();
let dir: string;

beforeAll(async () => {
  await server.start();
  dir = mkdtempSync(path.join(tmpdir(), "conveyor-http-"));
});
afterAll(() => server.stop());
beforeEach(() => {
  server.routes.clear();
  server.seen.length = 0;
});

function connector(conn: Partial<ConnectionConfig>, ctx: TestContext = memoryContext(), options: HttpConnectorOptions = fast): HttpConnector {
  return new HttpConnector({ type: "http", address: `${server.base}/feed.json`, method: "GET", ...conn }, ctx, options);
}

async function fetchFeed(c: HttpConnector): Promise<string> {
  const [file] = await c.list();
  if (!file) throw new Error("no file listed");
  const local = path.join(dir, `out-${Math.random()}.json`);
  await c.download(file, local);
  return readFileSync(local, "utf8");
}


describe("http import", () => {
  it("lists one virtual file named after the URL and sends the payload as query string for GET", async () => {
    server.json("/feed.json", (req) => ({ body: [{ sku: "A", q: new URL(req.url ?? "", "http://x").searchParams.get("since") }] }));
    const c = connector({ payload: { since: "2024-01-01", filter: { a: 1 } } });
    const [file] = await c.list();
    expect(file).toMatchObject({ name: "feed.json", size: 0 });
    expect(JSON.parse(await fetchFeed(c))).toEqual([{ sku: "A", q: "2024-01-01" }]);
    expect(server.seen[0]?.url).toBe("/feed.json?since=2024-01-01&filter=%7B%22a%22%3A1%7D");
    await c.close();
  });

  it("sends the payload as a JSON body for POST, names an extensionless feed response.json", async () => {
    server.json("/api/items", (req) => ({ body: { got: JSON.parse(req.body.toString()) } }));
    const c = connector({ address: `${server.base}/api/items`, method: "POST", payload: { page: 1 } });
    expect((await c.list())[0]?.name).toBe("response.json");
    expect(JSON.parse(await fetchFeed(c))).toEqual({ got: { page: 1 } });
    expect(server.seen[0]?.headers["content-type"]).toBe("application/json");
    await c.close();
  });

  it("uses basic auth, and a bearer token from login_address instead when set", async () => {
    server.json("/feed.json", (req) => ({ body: { auth: req.headers.authorization } }));
    server.json("/login", (req) => {
      const sent = JSON.parse(req.body.toString()) as { username: string; password: string };
      return sent.password === "pw-login-1234" ? { body: { data: { token: "tok-from-login" } } } : { status: 401, body: {} };
    });
    const basic = connector({ username: "u", password: "pw-basic-1234" });
    expect(JSON.parse(await fetchFeed(basic)).auth).toBe(`Basic ${Buffer.from("u:pw-basic-1234").toString("base64")}`);
    const login = connector({ username: "u", password: "pw-login-1234", login_address: `${server.base}/login` });
    expect(JSON.parse(await fetchFeed(login)).auth).toBe("Bearer tok-from-login");
    await Promise.all([basic.close(), login.close()]);
  });

  it("follows Link rel=next headers into one JSON array", async () => {
    server.json("/feed.json", (req) => {
      const page = Number(new URL(req.url ?? "", "http://x").searchParams.get("page") ?? "1");
      const headers: Record<string, string> = page < 3 ? { link: `<${server.base}/feed.json?page=${page + 1}>; rel="next", <${server.base}/feed.json?page=1>; rel="first"` } : {};
      return { body: [{ id: page * 10 }, { id: page * 10 + 1 }], headers };
    });
    const c = connector({ paginate: true });
    expect(JSON.parse(await fetchFeed(c))).toEqual([{ id: 10 }, { id: 11 }, { id: 20 }, { id: 21 }, { id: 30 }, { id: 31 }]);
    expect(server.seen).toHaveLength(3);
    await c.close();
  });

  it("follows the pagination object: a token into a query parameter, records by JSONPath", async () => {
    server.json("/feed.json", (req) => {
      const cursor = new URL(req.url ?? "", "http://x").searchParams.get("cursor");
      if (!cursor) return { body: { data: { items: [{ n: 1 }] }, meta: { next: "c2" } } };
      if (cursor === "c2") return { body: { data: { items: [{ n: 2 }, { n: 3 }] }, meta: { next: null } } };
      return { status: 400, body: {} };
    });
    const c = connector({ paginate: true, payload: { kind: "stock" }, pagination: { next: "$.meta.next", param: "cursor", records: "$.data.items" } });
    expect(JSON.parse(await fetchFeed(c))).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(server.seen.map((s) => s.url)).toEqual(["/feed.json?kind=stock", "/feed.json?kind=stock&cursor=c2"]);
    await c.close();
  });

  it("follows a next URL found in the body and stops on a repeated page", async () => {
    server.json("/feed.json", () => ({ body: { rows: [1], next: "/feed.json" } }));
    const c = connector({ paginate: true, pagination: { next: "$.next" } });
    const err = await caught(fetchFeed(c));
    expect(err.code).toBe("protocol");
    expect(err.message).toMatch(/twice/);
    expect(await readdir(dir)).not.toContain(expect.stringMatching(/\.part$/));
    await c.close();
  });
});

describe("http oauth", () => {
  let issued = 0;
  let valid = new Set<string>();
  beforeEach(() => {
    issued = 0;
    valid = new Set();
    server.json("/token", (req) => {
      const form = new URLSearchParams(req.body.toString());
      if (form.get("client_secret") !== "client-secret-xyz" || form.get("grant_type") !== "client_credentials") return { status: 401, body: { error: "invalid_client" } };
      const token = `access-token-${++issued}`;
      valid.add(token);
      return { body: { access_token: token, token_type: "Bearer", expires_in: 3600 } };
    });
    server.json("/feed.json", (req) => {
      const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
      return valid.has(token) ? { body: [{ token }] } : { status: 401, body: { error: "expired" } };
    });
  });
  const oauth = (): Partial<ConnectionConfig> => ({ oauth: { address: `${server.base}/token`, client_id: "cid", client_secret: "client-secret-xyz" } });

  it("caches the token in metadata across runs and refreshes it a minute before expiry", async () => {
    let now = Date.parse("2024-05-01T10:00:00Z");
    const ctx = memoryContext({}, { now: () => now });
    const first = connector(oauth(), ctx);
    expect(JSON.parse(await fetchFeed(first))).toEqual([{ token: "access-token-1" }]);
    await first.close();
    expect(ctx.metadata.values.get("oauth")).toMatchObject({ access_token: "access-token-1", expires_at: now + 3600_000 });

    now += 3500_000; // 100 s before expiry: still good
    const second = connector(oauth(), ctx);
    expect(JSON.parse(await fetchFeed(second))).toEqual([{ token: "access-token-1" }]);
    expect(issued).toBe(1);

    now += 50_000; // 50 s before expiry: inside the margin
    expect(JSON.parse(await fetchFeed(second))).toEqual([{ token: "access-token-2" }]);
    expect(issued).toBe(2);
    await second.close();
  });

  it("refreshes once on a 401 and fails with auth when the fresh token is refused too", async () => {
    const ctx = memoryContext();
    const c = connector(oauth(), ctx);
    await fetchFeed(c);
    valid.clear(); // the server revoked it early
    expect(JSON.parse(await fetchFeed(c))).toEqual([{ token: "access-token-2" }]);
    server.json("/feed.json", () => ({ status: 401, body: { error: "nope" } }));
    const before = server.seen.length;
    const err = await caught(fetchFeed(c));
    expect(err.code).toBe("auth");
    expect(server.seen.length - before).toBe(3); // feed, token, feed: no retry loop
    await c.close();
  });

  it("keeps the client secret and tokens out of errors and verbose logs", async () => {
    const ctx = memoryContext();
    const bad = connector({ oauth: { address: `${server.base}/token`, client_id: "cid", client_secret: "wrong-secret-777" } }, ctx);
    const err = await caught(fetchFeed(bad));
    expect(err.code).toBe("auth");
    const good = connector(oauth(), ctx);
    await fetchFeed(good);
    const text = `${JSON.stringify(err.toJSON())}${err.stack ?? ""}${ctx.logText()}`;
    expect(ctx.logText()).toMatch(/"msg":"http"/);
    for (const secret of ["wrong-secret-777", "client-secret-xyz", "access-token-1"]) expect(text).not.toContain(secret);
    await Promise.all([bad.close(), good.close()]);
  });
  it("keeps a key in the feed URL out of errors and logs, even when the server echoes the URL", async () => {
    const ctx = memoryContext();
    server.json("/keyed.csv", (req) => ({ status: 500, body: { error: `cannot serve ${req.url ?? ""}` } }));
    const c = connector({ address: `http://feeds:url-pass-5150@${server.base.slice("http://".length)}/keyed.csv?apikey=url-key-8086&format=csv` }, ctx, { ...fast, retry: { baseDelayMs: 1, maxDelayMs: 2, attempts: 2 } });
    const [file] = await c.list();
    const err = await caught(c.download(file ?? { name: "x", path: "x", size: 0, modified: null }, path.join(dir, "keyed.csv")));
    const text = `${err.describe()}${JSON.stringify(err.toJSON())}${ctx.logText()}${JSON.stringify(file)}`;
    expect(text).toContain("format=csv");
    for (const secret of ["url-key-8086", "url-pass-5150"]) expect(text).not.toContain(secret);
    await c.close();
  });
});

describe("http faults", () => {
  it("wrong password: auth error, not retried, password not in the message", async () => {
    server.json("/feed.json", (req) => (req.headers.authorization ? { status: 401, body: { error: "bad password-wrong-42" } } : { body: [] }));
    const c = connector({ username: "u", password: "password-wrong-42" });
    const err = await caught(fetchFeed(c));
    expect(err.code).toBe("auth");
    expect(err.retryable).toBe(false);
    expect(err.describe()).not.toContain("password-wrong-42");
    expect(server.seen).toHaveLength(1);
    await c.close();
  });

  it("missing feed: not_found", async () => {
    const c = connector({ address: `${server.base}/nothing.csv` });
    expect((await caught(fetchFeed(c))).code).toBe("not_found");
    await c.close();
  });

  it("dropped connection mid-transfer: retried, then a retryable transfer error and no file left", async () => {
    server.routes.set("/feed.json", (_req, res) => {
      res.writeHead(200, { "content-type": "text/csv", "content-length": "100000" });
      res.write("a,b\n".repeat(1000));
      setTimeout(() => res.destroy(), 20);
    });
    const c = connector({});
    const local = path.join(dir, "dropped.csv");
    const [file] = await c.list();
    if (!file) throw new Error("no file");
    const err = await caught(c.download(file, local));
    expect(err.code).toBe("transfer");
    expect(err.retryable).toBe(true);
    expect(server.seen).toHaveLength(3);
    expect(existsSync(local)).toBe(false);
    expect(existsSync(`${local}.part`)).toBe(false);
    await c.close();
  });

  it("slow server: timeout error after the configured wait", async () => {
    server.routes.set("/feed.json", (_req, res) => {
      setTimeout(() => res.writeHead(200).end("[]"), 4_000);
    });
    const c = connector({}, memoryContext(), { retry: { attempts: 1 }, timeoutMs: 300 });
    const started = Date.now();
    const err = await caught(fetchFeed(c));
    expect(err.code).toBe("timeout");
    expect(err.retryable).toBe(true);
    // undici checks its timers at about one-second resolution
    expect(Date.now() - started).toBeLessThan(2_500);
    await c.close();
  });

  it("delete, move and mkdir are refused with a clear protocol error", async () => {
    // The spec declares what http cannot do; the registry completes the connector with the refusals.
    const c = completeConnector(httpSpec, connector({}));
    const [file] = await c.list();
    if (!file) throw new Error("no file");
    for (const p of [c.delete(file), c.move(file, "done"), c.mkdir("x")]) {
      const err = await caught(p);
      expect(err.code).toBe("protocol");
      expect(err.message).toMatch(/not supported for http/);
    }
  });
});

describe("private-address guard", () => {
  it("classifies addresses", () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "::", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:a00:1"])
      expect(isPrivateAddress(a), a).toBe(true);
    for (const a of ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8", "172.32.0.1"]) expect(isPrivateAddress(a), a).toBe(false);
  });

  it("refuses loopback, private, link-local and ::1 unless CONVEYOR_ALLOW_PRIVATE_HOSTS", async () => {
    const ctx = memoryContext({ allowPrivateHosts: false });
    for (const host of ["127.0.0.1", "10.0.0.1", "169.254.169.254", "[::1]", "localhost"]) {
      const c = connector({ address: `http://${host}:${server.port}/feed.json` }, ctx);
      const err = await caught(fetchFeed(c));
      expect(err.code, host).toBe("private_host");
      expect(err.describe()).toContain("CONVEYOR_ALLOW_PRIVATE_HOSTS");
      await c.close();
    }
    expect(server.seen).toHaveLength(0);
  });
});

describe("http export", () => {
  it("uploads a 50 MB file streaming with its content type, hash intact", async () => {
    server.routes.set("/in", (req, res) => {
      res.writeHead(201).end(JSON.stringify({ sha: createHash("sha256").update(req.body).digest("hex"), type: req.headers["content-type"] }));
    });
    const local = path.join(dir, "big.csv");
    const block = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < block.length; i++) block[i] = (i * 31 + 7) % 251;
    writeFileSync(local, Buffer.concat(Array.from({ length: 50 }, () => block)));
    const hash = createHash("sha256");
    for await (const chunk of createReadStream(local)) hash.update(chunk as Buffer);
    const c = connector({ address: `${server.base}/in`, method: "PUT" });
    const started = Date.now();
    expect(await c.upload(local, "stock.csv")).toEqual({ size: 50 * 1024 * 1024 });
    const ms = Date.now() - started;
    const seen = server.seen[0];
    expect(seen?.method).toBe("PUT");
    expect(seen?.headers["content-type"]).toBe("text/csv");
    expect(createHash("sha256").update(seen?.body ?? Buffer.alloc(0)).digest("hex")).toBe(hash.digest("hex"));
    console.log(`http upload 50 MB: ${ms} ms`);
    await c.close();
  });

  it("sends one request per record, retrying a 5xx, reporting each record", async () => {
    let calls = 0;
    server.json("/orders", (req) => {
      calls++;
      const rec = JSON.parse(req.body.toString()) as { id: number };
      if (rec.id === 2 && calls === 2) return { status: 503, body: {} };
      if (rec.id === 3) return { status: 422, body: { error: "bad order" } };
      return { status: 200, body: { ok: true } };
    });
    const c = connector({ address: `${server.base}/orders`, method: "POST" });
    const results = await c.sendRecords([{ id: 1 }, { id: 2 }, { id: 3 }]);
    expect(results.map((r) => [r.index, r.ok, r.status])).toEqual([
      [0, true, 200],
      [1, true, 200],
      [2, false, 422],
    ]);
    expect(results[2]?.error).toMatch(/bad order/);
    expect(calls).toBe(4);
    await c.close();
  });
});
