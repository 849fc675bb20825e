import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { loadItemsCsv } from "../../src/embedded/index.js";
import { startHarness } from "./helpers.js";

const run = promisify(execFile);

describe("embedded service: data folder", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "conveyor-restart-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("items, orders, logs, bulk jobs and the token survive a restart", async () => {
    const first = await startHarness({}, dir);
    await first.form("/v1/editor/items/add", { identifier: "guid", guid: "KEEP", title: "Kept" });
    const created = await first.json("POST", "/v3/orders", { ordernumber: "R1", total: "1", items: [{ sku: "KEEP", price: "1", quantity: "1" }] });
    const token = first.svc.apiToken;
    await first.close();

    const second = await startHarness({}, dir);
    expect(second.svc.apiToken).toBe(token);
    expect((await second.json("GET", "/v1/editor/items/edit?guid=KEEP")).body).toMatchObject({ title: "Kept" });
    expect((await second.json("GET", `/v3/orders/${String(created.body.oid)}`)).body).toMatchObject({ count: "1" });
    const logs = await second.json("POST", "/v3/logs", { identifier: "KEEP" });
    expect((logs.body.results as { found: number }).found).toBe(1);
    const next = await second.json("POST", "/v3/orders", { ordernumber: "R2", total: "1", items: [{ sku: "x", price: "1", quantity: "1" }] });
    expect(Number(next.body.oid)).toBe(Number(created.body.oid) + 1);
    await second.close();
  });

  it("uses the configured API user and token instead of the generated one", async () => {
    const h = await startHarness({ apiUser: "ops", apiToken: "configured-token-123" }, dir);
    expect((await h.call("GET", "/v1/auth")).status).toBe(200);
    const old = await fetch(`${h.svc.url}/v1/auth`, { headers: { "X-Auth-User": "demo", "X-Auth-Token": "configured-token-123" } });
    expect(old.status).toBe(401);
    await h.close();
  });

  it("loadItemsCsv adds new guids, edits known ones and names bad lines", async () => {
    const file = path.join(dir, "products.csv");
    writeFileSync(file, "\uFEFFguid,title,price\nKEEP,Kept again,9\nN1,New,1\nN2,,2\n");
    const result = await loadItemsCsv(dir, file);
    expect(result).toMatchObject({ rows: 3, created: 1, updated: 1, failed: 1 });
    expect(result.errors[0]).toMatch(/^line 4: .*title/);
    const h = await startHarness({}, dir);
    expect((await h.json("GET", "/v1/editor/items/edit?guid=KEEP")).body).toMatchObject({ title: "Kept again", price: "9" });
    await h.close();
  });

  it("`conveyor service load` prints how many products it loaded", async () => {
    const file = path.join(dir, "more.csv");
    writeFileSync(file, "guid,title\nC1,One\nC2,Two\n");
    const { stdout } = await run(process.execPath, ["--import", "tsx", "src/cli.ts", "--data-dir", dir, "service", "load", file, "--json"], { cwd: path.resolve(import.meta.dirname, "../..") });
    expect(JSON.parse(stdout.trim().split("\n").pop() ?? "{}")).toMatchObject({ rows: 2, created: 2, failed: 0 });
  });

  it("`conveyor service` prints its base URL and credentials and serves until stopped", async () => {
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "--data-dir", dir, "--log-level", "silent", "service", "--port", "0", "--json"], { cwd: path.resolve(import.meta.dirname, "../.."), stdio: ["ignore", "pipe", "pipe"] });
    try {
      const info = await new Promise<Record<string, string>>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString();
          const line = out.split("\n").find((l) => l.startsWith("{"));
          if (line) resolve(JSON.parse(line) as Record<string, string>);
        });
        child.on("exit", (code) => reject(new Error(`service exited with ${code}`)));
      });
      expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${info.url}/v1/editor/items/edit?guid=C1`, { headers: { "X-Auth-User": String(info.apiUser), "X-Auth-Token": String(info.apiToken) } });
      expect(await res.json()).toMatchObject({ title: "One" });
    } finally {
      child.kill("SIGINT");
    }
  });
});
