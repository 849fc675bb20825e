import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FEED_CSV, startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "./daemon-harness.js";

/** `PUT /v3/automations/custom/{id}/files/{name}` (issue #30): a pushed feed is stored whole, or not at all, and its run queued. */

const LIMIT = 4096;

function pushDefinition(): Record<string, unknown> {
  const def = stockDefinition({ name: "Pushed stock", connection: { type: "sds3", path: "pushed" } });
  const [fc] = def.file_configs as Array<Record<string, unknown>>;
  return { ...def, file_configs: [{ ...fc, name: "stock-\\d+\\.csv" }] };
}

describe("pushed feeds", () => {
  let t: TestDaemon;
  let id = "";
  let folder = "";

  beforeAll(async () => {
    t = await startTestDaemon({ definitions: { "push.json": pushDefinition() }, env: { CONVEYOR_PUSH_MAX_BYTES: String(LIMIT) } });
    const list = await t.request("GET", "/v3/automations/custom");
    id = String((list.body.automations as Array<{ id: string; name: string }>).find((a) => a.name === "Pushed stock")?.id);
    folder = path.join(t.settings.storage, t.headers["X-Auth-User"] ?? "", "pushed");
  });
  afterAll(async () => t.close());

  const put = (name: string, body: BodyInit, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${t.daemon.url}/v3/automations/custom/${id}/files/${name}`, { method: "PUT", headers: { ...t.headers, "Content-Type": "text/csv", ...headers }, body, duplex: "half" } as RequestInit);

  const leftovers = (): string[] => (existsSync(folder) ? readdirSync(folder) : []);
  const spool = (): string[] => (existsSync(path.join(t.settings.dataDir, "push")) ? readdirSync(path.join(t.settings.dataDir, "push")) : []);

  it("stores the feed, answers 201 with its size, hash and run, and the run imports it", async () => {
    const res = await put("stock-1.csv", FEED_CSV);
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ file: "stock-1.csv", bytes: Buffer.byteLength(FEED_CSV), sha256: expect.stringMatching(/^[0-9a-f]{64}$/), run_id: expect.any(String) });
    const run = await waitForRun(t, String(body.run_id));
    expect(run).toMatchObject({ trigger: "api", outcome: "success", files: [expect.objectContaining({ name: "stock-1.csv", sha256: body.sha256 })] });
    expect(leftovers()).toEqual(["stock-1.csv"]);
    expect(spool()).toEqual([]);
    const items = t.daemon.embedded?.context.items;
    expect(items?.find("guid", "g-B2")?.stock).toBe("22");
  });

  it("takes a body without Content-Type too", async () => {
    const res = await fetch(`${t.daemon.url}/v3/automations/custom/${id}/files/stock-2.csv`, { method: "PUT", headers: t.headers, body: new Blob([FEED_CSV]) });
    expect(res.status).toBe(201);
    await waitForRun(t, String(((await res.json()) as Record<string, unknown>).run_id));
  });

  it("refuses a name no file config takes, naming the pattern", async () => {
    const res = await put("prices.csv", FEED_CSV);
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/matches no file config's name; allowed: .*stock-\\\\\\\\d\+/);
    expect(leftovers()).not.toContain("prices.csv");
  });

  it("refuses traversal, slashes, NUL and upload names", async () => {
    for (const name of ["..", "..%2Fstock-1.csv", "a%2Fstock-3.csv", "stock-3.csv%00", "%2E%2E", ".stock-3.csv.part", "..stock-3.csv"]) {
      const res = await put(name, FEED_CSV);
      expect([400, 404], name).toContain(res.status);
    }
    const res = await put("..%2F..%2Fstock-4.csv", FEED_CSV);
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/plain file name/);
    expect(readdirSync(path.dirname(folder)).filter((f) => f.startsWith("stock"))).toEqual([]);
  });

  it("answers 413 past the limit and leaves no file, with a length given or streamed", async () => {
    const big = "sku,qty,cost\n" + "A1,1,1.00\n".repeat(1000);
    const declared = await put("stock-5.csv", big);
    expect(declared.status).toBe(413);
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode("A1,1,1.00\n".repeat(100)));
        controller.close();
      },
    });
    const streamed = await put("stock-6.csv", chunks);
    expect(streamed.status).toBe(413);
    expect(await streamed.text()).toMatch(/CONVEYOR_PUSH_MAX_BYTES/);
    expect(leftovers().filter((f) => f.includes("stock-5") || f.includes("stock-6"))).toEqual([]);
    expect(spool()).toEqual([]);
  });

  it("answers 404 for another account's automation", async () => {
    const token = await t.daemon.accounts.add("other", undefined, "test");
    const res = await put("stock-7.csv", FEED_CSV, { "X-Auth-User": "other", "X-Auth-Token": token });
    expect(res.status).toBe(404);
    expect(leftovers()).not.toContain("stock-7.csv");
  });

  it("refuses an automation that does not import from the service's storage", async () => {
    const created = await t.request("POST", "/v3/automations/custom", { ...pushDefinition(), name: "Over sftp", slug: "over-sftp", connection: { type: "sftp", address: "sftp.example.test", username: "u", password: "p", path: "/in" } });
    expect(created.status).toBe(200);
    const other = String(created.body.id);
    const res = await fetch(`${t.daemon.url}/v3/automations/custom/${other}/files/stock-8.csv`, { method: "PUT", headers: t.headers, body: FEED_CSV });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/only to imports whose connection is the service's storage \(sdsftp or sds3\)/);
  });
});
