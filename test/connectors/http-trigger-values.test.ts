import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { HttpConnector } from "../../connectors/http.js";
import type { HttpConnection } from "../../connectors/http-connection.js";
import { clearSecretsForTests } from "../../src/secrets.js";
import { caught } from "../helpers/caught.js";
import { FeedServer } from "../helpers/http-feed-server.js";
import { memoryContext, type TestContext } from "../helpers/memory-context.js";
import { downloadText } from "./http-download.js";
import { REGEX_TIMEOUT_MS } from "../../connectors/http-values.js";

/**
 * What a trigger's answer yields (JSONPath, XPath, a header, a regex capture,
 * the body), where the values go (address, headers, payload, body), pointers
 * read from metadata, and trigger values that are credentials kept out of
 * logs and errors.
 */
const fast = { retry: { baseDelayMs: 5, maxDelayMs: 10 }, timeoutMs: 5_000 };
const server = new FeedServer();
let dir: string;

beforeAll(async () => {
  await server.start();
  dir = mkdtempSync(path.join(tmpdir(), "conveyor-trigger-values-"));
});
afterAll(() => server.stop());
beforeEach(() => {
  server.routes.clear();
  server.seen.length = 0;
  clearSecretsForTests();
});

function connector(conn: Partial<HttpConnection>, ctx: TestContext = memoryContext()): HttpConnector {
  return new HttpConnector({ type: "http", address: `${server.base}/feed.json`, method: "GET", payload: {}, ...conn }, ctx, fast);
}

const download = (c: HttpConnector): Promise<string> => downloadText(c, dir);

/** The final request echoes what it got: path with query, the X-Values header and the body. */
function echoFeed(): void {
  server.json("/feed.json", (req) => ({ body: [{ url: req.url, values: req.headers["x-values"], body: req.body.toString() }] }));
}

describe("trigger values", () => {
  it("by jsonpath, xpath, header and regex, each exposed as trigger_valueN and the last as trigger_value", async () => {
    server.json("/json", () => ({ body: { data: { job: { id: 41 } } } }));
    server.routes.set("/xml", (_req, res) => {
      res.writeHead(200, { "content-type": "application/xml" }).end("<r><session id='s-9'>ignored</session><next>n/2</next></r>");
    });
    server.json("/head", () => ({ body: {}, headers: { "x-cursor": "c&d 7" } }));
    server.routes.set("/text", (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" }).end("OK ticket=T-77 queued");
    });
    echoFeed();
    const c = connector({
      address: `${server.base}/feed.json?job={{trigger_value1}}&cursor={{trigger_value3}}`,
      headers: { "X-Values": "{{trigger_value2}}|{{trigger_value}}" },
      triggers: [
        { address: `${server.base}/json`, jsonpath: "$.data.job.id" },
        { address: `${server.base}/xml?after={{trigger_value}}`, xpath: "/r/session/@id" },
        { address: `${server.base}/head`, method: "POST", body: "plain {{trigger_value2}}", header: "X-Cursor" },
        { address: `${server.base}/text`, regex: "ticket=(\\S+)" },
      ],
    });
    const [echo] = JSON.parse(await download(c)) as Array<{ url: string; values: string }>;
    expect(echo?.url).toBe("/feed.json?job=41&cursor=c%26d%207");
    expect(echo?.values).toBe("s-9|T-77");
    expect(server.seen.map((s) => s.url)).toEqual(["/json", "/xml?after=41", "/head", "/text", "/feed.json?job=41&cursor=c%26d%207"]);
    expect(server.seen[2]).toMatchObject({ method: "POST", body: Buffer.from("plain s-9") });
    expect(server.seen[2]?.headers["content-type"]).toBe("text/plain; charset=utf-8");
    await c.close();
  });

  it("fills a POST payload and takes the whole body when no selector is given", async () => {
    server.routes.set("/id", (_req, res) => {
      res.writeHead(200).end("  job-5\n");
    });
    server.json("/feed.json", (req) => ({ body: { got: JSON.parse(req.body.toString()) as unknown } }));
    const c = connector({ method: "POST", payload: { job: "{{trigger_value}}", nested: ["x-{{trigger_value1}}"] }, triggers: [{ address: `${server.base}/id` }] });
    expect(JSON.parse(await download(c))).toEqual({ got: { job: "job-5", nested: ["x-job-5"] } });
    await c.close();
  });

  it("an answer without the value fails the trigger, naming it and quoting the answer", async () => {
    server.json("/json", () => ({ body: { status: "queued" } }));
    const c = connector({ address: "{{trigger_value}}", triggers: [{ address: `${server.base}/json`, jsonpath: "$.download_url" }] });
    const err = await caught(download(c));
    expect(err.code).toBe("protocol");
    expect(err.message).toContain('connection.triggers[0]: jsonpath $.download_url found nothing in the answer (HTTP 200): {"status":"queued"}');
    await c.close();
  });
});

describe("a regex that backtracks without end", () => {
  it("is stopped after its time limit with an error that says why (without the limit, this test never ends)", async () => {
    server.routes.set("/text", (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" }).end(`${"a".repeat(40)}!`);
    });
    const c = connector({ address: "{{trigger_value}}", triggers: [{ address: `${server.base}/text`, regex: "((a+)+)$" }] });
    const err = await caught(download(c));
    expect(err.code).toBe("protocol");
    expect(err.message).toBe(`connection.triggers[0].regex ran longer than ${REGEX_TIMEOUT_MS / 1000} s over the answer and was stopped`);
    await c.close();
  });
});

describe("pointers", () => {
  it("are read from the metadata at request time, the rule's initial until there is a value", async () => {
    echoFeed();
    const conn: Partial<HttpConnection> = {
      address: `${server.base}/feed.json?since={{pointer.since}}`,
      pointers: { since: { from: "$.updated_at", keep: "max", initial: "1970-01-01T00:00:00Z" } },
    };
    const ctx = memoryContext();
    const first = connector(conn, ctx);
    expect(JSON.parse(await download(first))[0].url).toBe("/feed.json?since=1970-01-01T00%3A00%3A00Z");
    await ctx.metadata.set("pointers", { since: "2026-03-01T10:00:00Z" });
    const second = connector(conn, ctx);
    expect(JSON.parse(await download(second))[0].url).toBe("/feed.json?since=2026-03-01T10%3A00%3A00Z");
    await Promise.all([first.close(), second.close()]);
  });

  it("a pointer with neither a value nor an initial fails the request, naming it", async () => {
    echoFeed();
    const c = connector({ address: `${server.base}/feed.json?since={{pointer.since}}` });
    const err = await caught(download(c));
    expect(err.code).toBe("definition_invalid");
    expect(err.message).toContain('the pointer "since" has no value yet and connection.pointers.since.initial is not set');
    expect(server.seen).toHaveLength(0);
    await c.close();
  });
});

describe("trigger values that are credentials", () => {
  const TOKEN = "sess-Zq81-secret-token";

  it("a token found by a trigger and sent as Authorization is masked in logs and errors", async () => {
    server.json("/login", () => ({ body: { session: TOKEN } }));
    // The final request fails, echoing the token it was sent.
    server.json("/feed.json", (req) => ({ status: 500, body: { error: `no feed for ${req.headers.authorization ?? ""}` } }));
    const ctx = memoryContext();
    const c = connector({ headers: { Authorization: "Bearer {{trigger_value}}" }, triggers: [{ address: `${server.base}/login`, method: "POST", payload: {}, jsonpath: "$.session" }] }, ctx);
    const err = await caught(download(c));
    expect(server.seen.at(-1)?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(err.message).toContain("HTTP 500");
    const text = `${err.describe()}${JSON.stringify(err.toJSON())}${err.stack ?? ""}${ctx.logText()}`;
    expect(ctx.logText()).toContain("http trigger 1 of 1 answered");
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(Buffer.from(TOKEN).toString("base64"));
    await c.close();
  });

  it("a value under a token-like name is a secret even when the trigger that found it fails later", async () => {
    server.json("/token", () => ({ body: { access_token: TOKEN } }));
    server.json("/next", () => ({ status: 400, body: { error: `bad token ${TOKEN}` } }));
    const ctx = memoryContext();
    const c = connector({ triggers: [{ address: `${server.base}/token`, jsonpath: "$.access_token" }, { address: `${server.base}/next?t={{trigger_value}}` }] }, ctx);
    const err = await caught(download(c));
    expect(err.code).toBe("protocol");
    expect(`${err.describe()}${ctx.logText()}`).not.toContain(TOKEN);
    await c.close();
  });

  it("credentials are not sent to a host an answer chose", async () => {
    const other = new FeedServer();
    await other.start();
    other.json("/file.csv", (req) => ({ body: { auth: req.headers.authorization ?? null, key: req.headers["x-api-key"] ?? null } }));
    server.json("/job", () => ({ body: { url: `${other.base.replace("127.0.0.1", "localhost")}/file.csv` } }));
    const c = connector({ address: "{{trigger_value}}", username: "u", password: "basic-pass-1234", headers: { "X-Api-Key": "key-4321-abcd", Accept: "*/*" }, triggers: [{ address: `${server.base}/job`, jsonpath: "$.url" }] });
    expect(JSON.parse(await download(c))).toEqual({ auth: null, key: null });
    expect(server.seen[0]?.headers.authorization).toMatch(/^Basic /);
    expect(server.seen[0]?.headers["x-api-key"]).toBe("key-4321-abcd");
    await c.close();
    await other.stop();
  });
});
