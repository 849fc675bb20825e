import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encryptValue, type Automation } from "../../src/definition/index.js";
import { runSummary } from "../../src/cli-output/summary.js";
import { keepMasked } from "../../src/pipeline/debug-mask.js";
import { searchSecrets } from "../../src/pipeline/secret-search.js";
import { registerSecret, secretCount } from "../../src/secrets.js";
import type { RunRecord } from "../../src/state/index.js";
import { FeedServer } from "../helpers/http-feed-server.js";
import { csv, openHarness, type Harness } from "../pipeline/harness.js";
import { automationOf, openOrderEnv, putFeed, run as runOrders, type OrderEnv } from "../pipeline/orders/order-env.js";

/**
 * Every secret a run knows (an encrypted parameter, a connection password, a
 * URL credential) is masked in every file the run keeps, bulk files and
 * source copies included; a debug file that had one masked says so; a live
 * run sends the real value to the service and keeps no clear copy.
 */
const API_KEY = "sk-live-7Hq2Zr9Xw";
const PASSWORD = "conn-pass-4242";
const URL_KEY = "url-key-8686";

/** Every file under the run's folder, by its path relative to it, with its bytes as text. */
function runFiles(h: Harness, runId: string): Map<string, string> {
  const root = path.join(h.dir, ".conveyor", "runs", runId);
  const out = new Map<string, string>();
  if (!existsSync(root)) return out;
  for (const name of readdirSync(root, { recursive: true }) as string[]) {
    const file = path.join(root, name);
    if (statSync(file).isFile()) out.set(name, readFileSync(file, "latin1"));
  }
  return out;
}

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The run record as the store has it, and each debug file the store keeps for the run. */
async function stored(h: Harness, runId: string): Promise<{ record: string; files: Map<string, string> }> {
  const store = h.worker.env.store;
  const files = new Map<string, string>();
  for (const name of await store.listDebugFiles(runId)) {
    const file = await store.getDebugFile(runId, name);
    if (file) files.set(name, await text(file.open()));
  }
  return { record: JSON.stringify(await store.getRun(runId)), files };
}

/** Names the files holding `secret` in any form a file could carry it in (as is, URL- or base64-encoded). */
function holding(files: Map<string, string>, secret: string): string[] {
  const forms = [secret, encodeURIComponent(secret), Buffer.from(secret).toString("base64")];
  return [...files].filter(([, body]) => forms.some((f) => body.includes(f))).map(([name]) => name);
}

async function expectNoClear(h: Harness, run: RunRecord, secret: string): Promise<void> {
  expect(holding(runFiles(h, run.id), secret)).toEqual([]);
  const kept = await stored(h, run.id);
  expect(holding(kept.files, secret)).toEqual([]);
  expect(kept.record).not.toContain(secret);
  expect(JSON.stringify(run)).not.toContain(secret);
  expect(runSummary(run)).not.toContain(secret);
}

const debugFile = (h: Harness, runId: string, name: string): string => readFileSync(path.join(h.dir, ".conveyor", "runs", runId, "debug", name), "utf8");

describe("an encrypted parameter in field_run", () => {
  let h: Harness;
  let automation: Automation;
  beforeEach(async () => {
    h = await openHarness();
    const key = h.worker.env.secretKey;
    if (!key) throw new Error("the harness has no secret key");
    h.writeFeed("feed-1.csv", csv(["guid", "title"], [["P1", "One"], ["P2", "Two"], ["P3", "Three"]]));
    automation = h.automation(
      { field_map: { guid: "guid", title: "title" }, field_run: { description: "key <<api key>>" }, create: "add" },
      { parameters: [{ name: "api key", value: encryptValue(API_KEY, key), encrypted: true }] },
    );
  });
  afterEach(async () => {
    await h.close();
  });

  it("a debug run masks it in bulk-1.csv, plan.csv, records.csv, summary.json and the run record, and says bulk-1.csv was masked", async () => {
    const run = await h.run(automation, { mode: "debug" });
    expect(run.outcome).toBe("success");
    expect(run.debug_files).toEqual(expect.arrayContaining(["bulk-1.csv", "plan.csv", "records.csv", "summary.json"]));
    await expectNoClear(h, run, API_KEY);

    expect(debugFile(h, run.id, "bulk-1.csv")).toBe("action,guid,title,description\r\nadd,P1,One,key ********\r\nadd,P2,Two,key ********\r\nadd,P3,Three,key ********\r\n");
    expect(debugFile(h, run.id, "plan.csv")).toContain("create,add,P1,description,,key ********,new");
    expect(debugFile(h, run.id, "records.csv")).toContain("key ********");
    const note = "bulk-1.csv: 3 values masked; it cannot be sent as is";
    expect(run.masked).toEqual([{ file: "bulk-1.csv", values: 3, note }]);
    const summary = JSON.parse(debugFile(h, run.id, "summary.json")) as { masked?: unknown };
    expect(summary.masked).toEqual([{ file: "bulk-1.csv", values: 3, note }]);
    expect(runSummary(run)).toContain(note);
    // The source copy had nothing to mask: it is the supplier's file as it was.
    expect(debugFile(h, run.id, "source/feed-1.csv")).toBe(readFileSync(path.join(h.feeds, "feed-1.csv"), "utf8"));
  });

  it("a live run sends the real value to the service and keeps no clear copy of it", async () => {
    const run = await h.run(automation);
    expect(run.outcome).toBe("success");
    // Read back over the service's HTTP API, as any client of it would.
    const item = await h.worker.env.client.getItem({ guid: "P2" });
    expect(item?.description).toBe(`key ${API_KEY}`);
    await expectNoClear(h, run, API_KEY);
    // A live run keeps no bulk file: the work folder with the real ones is gone.
    expect([...runFiles(h, run.id).keys()].filter((f) => f.includes("bulk-"))).toEqual([]);
    expect(run.masked).toBeUndefined();
  });

  it("masks it where the record's identifier carries it, in plan.csv as in the bulk file", async () => {
    h.writeFeed("feed-1.csv", csv(["guid", "title"], [[`id-${API_KEY}`, "Odd"]]));
    const run = await h.run(automation, { mode: "debug" });
    await expectNoClear(h, run, API_KEY);
    expect(debugFile(h, run.id, "plan.csv")).toContain("create,add,id-********,title,,Odd,new");
    // The feed carries it too: its copy under source/ is masked and named.
    expect(run.masked?.map((m) => m.note)).toEqual(["source/feed-1.csv: 1 value masked; it is not the file as read or written, byte for byte", "bulk-1.csv: 2 values masked; it cannot be sent as is"]);
  });

  it("masks it where a row error and a bulk_file feed carry it, errors.csv and the source copy included", async () => {
    // A feed that echoes the key (a supplier's API listing its own links) and has it where an action goes.
    h.writeFeed("feed-9.csv", `action,guid,title,link\nadd,B1,Bee,https://feeds.example/b1?apikey=${API_KEY}\n${API_KEY},B2,Two,x\n`);
    const bulk = h.automation({ name: "feed-9\\.csv", field_map: {}, bulk_file: 1, error_limit: "100%" }, { parameters: automation.parameters });
    const run = await h.run(bulk, { mode: "debug" });
    expect(run.counts).toMatchObject({ rows: 2, row_errors: 1, create: 1 });
    await expectNoClear(h, run, API_KEY);
    expect(debugFile(h, run.id, "errors.csv")).toContain('unknown action ""********""');
    expect(debugFile(h, run.id, "bulk-1.csv")).toContain("https://feeds.example/b1?apikey=********");
    expect(run.masked?.map((m) => m.note)).toEqual([
      "source/feed-9.csv: 2 values masked; it is not the file as read or written, byte for byte",
      "bulk-1.csv: 1 value masked; it cannot be sent as is",
    ]);
  });
});

describe("a connection password and a URL credential", () => {
  let h: Harness;
  const feed = new FeedServer();
  beforeEach(async () => {
    h = await openHarness({ CONVEYOR_ALLOW_PRIVATE_HOSTS: "true" });
    await feed.start();
    feed.routes.set("/feed.csv", (req, res) => {
      const auth = Buffer.from(`feeder:${PASSWORD}`).toString("base64");
      if (req.headers.authorization !== `Basic ${auth}` || !(req.url ?? "").includes(`apikey=${URL_KEY}`)) {
        res.writeHead(401).end("no");
        return;
      }
      res.writeHead(200, { "content-type": "text/csv" }).end(`guid,title\nH1,Hat\nH2,Hood\n`);
    });
  });
  afterEach(async () => {
    await feed.stop();
    await h.close();
  });

  function automation(): Automation {
    return h.automation(
      // Plain parameters: the value is a secret because of where the connection uses it.
      { name: "feed\\.csv", field_map: { guid: "guid", title: "title" }, field_run: { description: "<<feed password>> from <<feed url>>" }, create: "add" },
      {
        connection: { type: "http", address: "<<feed url>>", username: "feeder", password: "<<feed password>>", payload: {} },
        parameters: [
          { name: "feed password", value: PASSWORD },
          { name: "feed url", value: `${feed.base}/feed.csv?apikey=${URL_KEY}` },
        ],
      },
    );
  }

  it("a debug run masks both in every file and counts them in bulk-1.csv", async () => {
    const run = await h.run(automation(), { mode: "debug" });
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    await expectNoClear(h, run, PASSWORD);
    await expectNoClear(h, run, URL_KEY);
    expect(debugFile(h, run.id, "bulk-1.csv")).toContain(`******** from ${feed.base}/feed.csv?apikey=********`);
    expect(run.masked).toEqual([{ file: "bulk-1.csv", values: 4, note: "bulk-1.csv: 4 values masked; it cannot be sent as is" }]);
  });

  it("a live run sends both to the service and keeps neither in clear", async () => {
    const run = await h.run(automation());
    expect(run.outcome).toBe("success");
    const item = await h.worker.env.client.getItem({ guid: "H1" });
    expect(item?.description).toBe(`${PASSWORD} from ${feed.base}/feed.csv?apikey=${URL_KEY}`);
    await expectNoClear(h, run, PASSWORD);
    await expectNoClear(h, run, URL_KEY);
  });
});

describe("an encrypted parameter in an order body", () => {
  let env: OrderEnv;
  beforeEach(async () => {
    env = await openOrderEnv();
  });
  afterEach(() => env.close());

  it("a debug run masks it in bulk-1.json and says so", async () => {
    const key = env.worker.env.secretKey;
    if (!key) throw new Error("the environment has no secret key");
    await putFeed(env, "orders-1.csv", "Order,Email\nW1,a@example.com\nW2,b@example.com\n");
    const automation = automationOf({
      name: "orders",
      slug: "orders",
      active: false,
      schedule: "0 * * * *",
      type: "orders",
      action: "import",
      connection: { type: "sdsftp", path: "orders" },
      parameters: [{ name: "api key", value: encryptValue(API_KEY, key), encrypted: true }],
      file_configs: [{ min_age: 0, name: "/orders.*\\.csv/", field_map: { ordernumber: "Order", email: "Email" }, field_run: { notes: "key <<api key>>" }, identifier: "ordernumber", create: true }],
    });
    const run = await runOrders(env, automation, "debug");
    expect(run.error).toBeNull();
    const body = readFileSync(path.join(env.settings.dataDir, "runs", run.id, "debug", "bulk-1.json"), "utf8");
    expect(body).not.toContain(API_KEY);
    expect(body).toContain("key ********");
    expect(run.masked).toEqual([{ file: "bulk-1.json", values: 2, note: "bulk-1.json: 2 values masked; it cannot be sent as is" }]);
  });
});

describe("a kept copy of a file", () => {
  const CHUNK = 1 << 20;
  const secret = 'chunk"edge-secret-0101';
  registerSecret(secret);
  const dir = (): string => mkdtempSync(path.join(tmpdir(), "conveyor-mask-"));

  it("is a hard link of the file when it holds no secret", async () => {
    const d = dir();
    const from = path.join(d, "bulk.csv");
    writeFileSync(from, "action,guid\r\nadd,P1\r\n");
    expect(await keepMasked(from, path.join(d, "kept.csv"))).toBe(0);
    expect(statSync(path.join(d, "kept.csv")).ino).toBe(statSync(from).ino);
  });

  it("masks a secret cut by a chunk's edge, in its CSV and JSON forms, and leaves every other byte as it was", async () => {
    const d = dir();
    const from = path.join(d, "bulk.bin");
    const csvForm = Buffer.from(secret.replaceAll('"', '""'));
    const jsonForm = Buffer.from(JSON.stringify(secret).slice(1, -1));
    // Binary filler (every byte value) with the secret across the first chunk's edge, in CSV form across the second, in JSON form at the end.
    const filler = (n: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => i % 256));
    const a = filler(CHUNK - 5);
    const b = filler(CHUNK - csvForm.length);
    const parts = [a, Buffer.from(secret), b, csvForm, filler(7), jsonForm];
    writeFileSync(from, Buffer.concat(parts));
    const to = path.join(d, "kept.bin");
    expect(await keepMasked(from, to)).toBe(3);
    const mask = Buffer.from("********");
    expect(readFileSync(to).equals(Buffer.concat([a, mask, b, mask, filler(7), mask]))).toBe(true);
  });

  it("searches a large file on a thread: masks the secret near its end, and links it when none is there", async () => {
    const d = dir();
    const big = "x".repeat(17 << 20);
    const clean = path.join(d, "clean.csv");
    writeFileSync(clean, big);
    expect(await keepMasked(clean, path.join(d, "clean-kept.csv"))).toBe(0);
    expect(statSync(path.join(d, "clean-kept.csv")).ino).toBe(statSync(clean).ino);
    const from = path.join(d, "bulk.csv");
    writeFileSync(from, `${big}${secret}y`);
    expect(await keepMasked(from, path.join(d, "kept.csv"))).toBe(1);
    expect(readFileSync(path.join(d, "kept.csv"), "latin1").endsWith("x********y")).toBe(true);
  });

  it("stands on a search made as the file was sealed only while no secret was registered since", async () => {
    const d = dir();
    const from = path.join(d, "bulk.csv");
    writeFileSync(from, `add,${secret}\r\n`);
    const searched = await searchSecrets(from);
    expect(searched).toEqual({ secrets: secretCount(), found: true });
    expect(await keepMasked(from, path.join(d, "kept.csv"), searched)).toBe(1);
    // A search that found nothing is taken at its word (the file is linked, not read again)...
    expect(await keepMasked(from, path.join(d, "trusted.csv"), { secrets: secretCount(), found: false })).toBe(0);
    expect(statSync(path.join(d, "trusted.csv")).ino).toBe(statSync(from).ino);
    // ...unless a secret was registered after it: then the file is searched again.
    expect(await keepMasked(from, path.join(d, "stale.csv"), { secrets: secretCount() - 1, found: false })).toBe(1);
  });

  it("finds a secret whose only occurrence is cut by a chunk's edge", async () => {
    const d = dir();
    const from = path.join(d, "bulk.csv");
    writeFileSync(from, `${"x".repeat(CHUNK - 3)}${secret}${"y".repeat(10)}`);
    expect(await keepMasked(from, path.join(d, "kept.csv"))).toBe(1);
    expect(readFileSync(path.join(d, "kept.csv"), "utf8")).toBe(`${"x".repeat(CHUNK - 3)}********${"y".repeat(10)}`);
  });
});
