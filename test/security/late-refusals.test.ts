import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { applyParams } from "../../src/commands/params.js";
import { parseAutomation, resolveAutomation } from "../../src/definition/index.js";
import type { RunStage } from "../../src/pipeline/environment.js";
import { startTestDaemon, stockDefinition, type TestDaemon } from "../daemon/daemon-harness.js";
import { TestSftpServer } from "../helpers/sftp-server.js";
import { TcpProxy } from "../helpers/tcp-proxy.js";
import { csv, openHarness, type Harness } from "../pipeline/harness.js";

/**
 * Late refusals (issue #24): a path a definition makes is refused when the
 * definition is saved or checked, or, when a parameter makes it, at run start
 * before any connection opens: never after apply.
 */

const PASSWORD = "late-Refusal-Pa55";
const HEADER = ["guid", "title", "stock"];
const ROWS = Array.from({ length: 8 }, (_, i) => [`L${i}`, `Late part ${i}`, String(i)]);
const FIELD_MAP = { guid: "guid", title: "title", stock: "stock" };

function exportDefinition(fileConfig: Record<string, unknown>): Record<string, unknown> {
  return {
    name: "Hostile export",
    active: false,
    schedule: "0 3 * * *",
    type: "products",
    action: "export",
    connection: { type: "sftp", address: "127.0.0.1", username: "u", password: PASSWORD, path: "/out" },
    file_configs: [{ field_map: { sku: "SKU" }, ...fileConfig }],
  };
}

describe("after_import move:<<dest>> with a climbing dest", () => {
  let h: Harness;
  let root: string;
  let server: TestSftpServer;
  let proxy: TcpProxy;

  beforeEach(async () => {
    // The partner's server is on loopback, which the network guard opens only with this setting.
    h = await openHarness({ CONVEYOR_ALLOW_PRIVATE_HOSTS: "true" });
    root = mkdtempSync(path.join(tmpdir(), "conveyor-late-sftp-"));
    mkdirSync(path.join(root, "in"));
    const feed = path.join(root, "in", "feed-1.csv");
    writeFileSync(feed, csv(HEADER, ROWS));
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(feed, old, old);
    server = await new TestSftpServer({ root, username: "partner", password: PASSWORD }).start();
    // Every connection the run opens passes here and is counted.
    proxy = await new TcpProxy(server.port).start();
  });
  afterEach(async () => {
    await proxy.close();
    await server.close();
    await h.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** Saved with a harmless dest; the run is given `dest` as `--param` gives it. */
  function automation(dest: string) {
    const saved = h.automation(
      { field_map: FIELD_MAP, create: "add", after_import: "move:<<dest>>" },
      {
        connection: { type: "sftp", address: "127.0.0.1", port: proxy.port, username: "partner", password: PASSWORD, path: "/in" },
        parameters: [{ name: "dest", value: "done" }],
      },
    );
    return applyParams(saved, [`dest=${dest}`]);
  }

  it("is kept as a template at save; its value is judged at save when given, else at run start", () => {
    expect(automation("../../x").file_configs[0]?.after_import).toEqual({ move: "<<dest>>" });
  });

  it("fails the run in prepare with unsafe_path naming the field: no connection, no write", async () => {
    const stages: RunStage[] = [];
    const run = await h.run(automation("../../x"), { progress: (p) => stages.push(p.stage) });
    expect(run.outcome).toBe("failed");
    expect(run.error?.code).toBe("unsafe_path");
    expect(run.error?.message).toMatch(/file_configs\[0\]\.after_import: after resolving parameters: remote folder "\.\.\/\.\.\/x" is refused: it climbs out/);
    expect(run.error?.message).toMatch(/before any connection opened/);
    expect(run.requests).toEqual({ read: 0, write: 0 });
    expect(run.counts).toMatchObject({ rows: 0, create: 0, update: 0 });
    expect([...new Set(stages)]).toEqual(["prepare", "done"]);
    expect(proxy.connections).toBe(0);
    expect(h.items().size).toBe(0);
    expect(h.bulkJobs()).toHaveLength(0);
    expect(readdirSync(path.join(root, "in"))).toEqual(["feed-1.csv"]);
  });

  it.each([["/etc"], ["done/../../x"], ["a\u0000b"], ["done\nx"], ["C:\\Windows"]])("refuses dest %j the same way", async (dest) => {
    const run = await h.run(automation(dest));
    expect(run.error?.code).toBe("unsafe_path");
    expect(run.error?.message).toMatch(/^ {2}file_configs\[0\]\.after_import: after resolving parameters: .* is refused: it (climbs out|is absolute|holds a control character)/m);
    expect(run.requests).toEqual({ read: 0, write: 0 });
    expect(proxy.connections).toBe(0);
  });

  it("with a dest inside the connection's path, the same run applies and moves (the control)", async () => {
    const run = await h.run(automation("done"));
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ create: 8 });
    expect(proxy.connections).toBeGreaterThan(0);
    expect(h.items().size).toBe(8);
    expect(readdirSync(path.join(root, "in", "done"))).toEqual(["feed-1.csv"]);
  });
});

describe("paths in a definition, judged at save (parse)", () => {
  it.each([
    ["an absolute export name", exportDefinition({ name: "/etc/cron.d/x.csv" }), "file_configs[0].name", /it is absolute/],
    ["an export name that climbs", exportDefinition({ name: "../x-{{DATE}}.csv" }), "file_configs[0].name", /climbs out/],
    ["an export name with a control character", exportDefinition({ name: "x\r\n.csv" }), "file_configs[0].name", /control character \(U\+000D\)/],
    ["an export name that names a folder", exportDefinition({ name: "out/" }), "file_configs[0].name", /empty part/],
    ["an absolute placeholder export name", exportDefinition({ name: "/<<where>>.csv" }), "file_configs[0].name", /"\/<<where>>\.csv" \(= "\/x\.csv" with the parameters' values\) is refused: it is absolute/],
    ["a storage path that climbs out", { ...exportDefinition({ name: "x.csv" }), connection: { type: "sdsftp", path: "../bob" } }, "connection.path", /climbs out of the storage root/],
    ["a storage export name with a backslash", { ...exportDefinition({ name: "a\\b.csv" }), connection: { type: "sdsftp", path: "out" } }, "file_configs[0].name", /backslash/],
  ])("%s", (_what, raw, field, message) => {
    const parameters = String(JSON.stringify(raw)).includes("<<where>>") ? { parameters: [{ name: "where", value: "x" }] } : {};
    const parsed = parseAutomation({ ...raw, ...parameters });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    const problem = parsed.problems.find((p) => p.path === field);
    expect(problem?.message).toMatch(message);
    expect(problem?.allowed).toMatch(/relative|inside the account's storage/);
  });

  it("refuses a climbing move folder, in either spelling", () => {
    for (const after of ["move:../../x", { move: "/abs" }, "move:in/../../x"]) {
      const raw = exportDefinition({});
      const parsed = parseAutomation({ ...raw, action: "import", file_configs: [{ name: "feed\\.csv", field_map: { sku: "SKU" }, identifier: "sku", update: "edit", after_import: after }] });
      expect(parsed.ok ? [] : parsed.problems.map((p) => p.path)).toEqual(["file_configs[0].after_import"]);
    }
  });

  it("refuses a control character in the IMAP mailbox, where CRLF would start a new command", () => {
    const parsed = parseAutomation({
      ...exportDefinition({}),
      action: "import",
      connection: { type: "email", address: "imap.example.com", username: "u", password: PASSWORD, folder: "INBOX\r\nA1 DELETE Sent" },
      file_configs: [{ name: "feed\\.csv", field_map: { sku: "SKU" }, identifier: "sku", update: "edit" }],
    });
    expect(parsed.ok ? [] : parsed.problems).toEqual([
      { path: "connection.folder", message: '"INBOX\\r\\nA1 DELETE Sent" is refused: it holds a control character (U+000D)', allowed: expect.stringMatching(/^a mailbox name/) },
    ]);
  });

  it("judges a placeholder with the value the definition gives its parameter, unless encrypted", () => {
    const raw = { ...exportDefinition({}), action: "import", file_configs: [{ name: "feed\\.csv", field_map: { sku: "SKU" }, identifier: "sku", update: "edit", after_import: "move:<<dest>>" }] };
    const given = parseAutomation({ ...raw, parameters: [{ name: "dest", value: "../../x" }] });
    expect(given.ok ? [] : given.problems).toEqual([
      { path: "file_configs[0].after_import", message: 'remote folder "<<dest>>" (= "../../x" with the parameters\' values) is refused: it climbs out of the connection\'s path with ..', allowed: expect.stringMatching(/^a folder relative to connection\.path/) },
    ]);
    expect(parseAutomation({ ...raw, parameters: [{ name: "dest", value: "done" }] }).ok).toBe(true);
    // A value still to be given, or one only the run can decrypt: judged at run start.
    expect(parseAutomation({ ...raw, parameters: [{ name: "dest", value: "" }] }).ok).toBe(true);
    expect(parseAutomation({ ...raw, parameters: [{ name: "dest", value: "../../x", encrypted: true }] }).ok).toBe(true);
  });

  it("accepts what the connectors accept: absolute ftp/sftp folders, names in subfolders, tokens", () => {
    const parsed = parseAutomation({ ...exportDefinition({ name: "daily/stock-{{DATE}}-<<shop>>.csv" }), parameters: [{ name: "shop", value: "main" }] });
    expect(parsed.ok ? [] : parsed.problems).toEqual([]);
  });
});

describe("paths a whole placeholder makes, judged at run start", () => {
  function refusal(raw: Record<string, unknown>, params: string[]): unknown {
    const parsed = parseAutomation(raw);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    try {
      resolveAutomation(applyParams(parsed.automation, params), { runId: "r1", now: new Date() });
      return null;
    } catch (err) {
      return err;
    }
  }

  it("after_import: <<after>> given move:../x", () => {
    const raw = { ...exportDefinition({}), action: "import", file_configs: [{ name: "feed\\.csv", field_map: { sku: "SKU" }, identifier: "sku", update: "edit", after_import: "<<after>>" }], parameters: [{ name: "after", value: "keep" }] };
    expect(refusal(raw, ["after=move:done"])).toBeNull();
    expect(refusal(raw, ["after=move:../x"])).toMatchObject({ code: "unsafe_path", details: { field: "file_configs[0].after_import" }, message: expect.stringContaining('remote folder "../x" is refused') });
  });

  it("a storage connection.path <<folder>> given ../bob", () => {
    const raw = { ...exportDefinition({ name: "x.csv" }), connection: { type: "sdsftp", path: "<<folder>>" }, parameters: [{ name: "folder", value: "exports" }] };
    expect(refusal(raw, ["folder=exports/daily"])).toBeNull();
    expect(refusal(raw, ["folder=../bob"])).toMatchObject({ code: "unsafe_path", details: { field: "connection.path" }, message: expect.stringContaining("climbs out of the storage root") });
  });
});

describe("saved through the daemon API and checked by conveyor check", () => {
  let t: TestDaemon;
  beforeAll(async () => {
    const climbing = {
      ...stockDefinition({ name: "Climbing move" }),
      file_configs: [{ name: "stock\\.csv", field_map: { sku: "sku", stock: "qty" }, identifier: "sku", update: "edit", after_import: "move:/var/tmp/x" }],
    };
    t = await startTestDaemon({ definitions: { "stock.json": stockDefinition(), "climbing.json": climbing } });
  });
  afterAll(async () => t.close());

  function failures(body: Record<string, unknown>): string {
    return Object.values((body.results as { failed: Record<string, { message: string }> }).failed)
      .map((f) => f.message)
      .join("\n");
  }

  it("the start-up loader leaves out a definition file whose move folder is absolute", async () => {
    const list = await t.request("GET", "/v3/automations/custom");
    expect(list.status).toBe(200);
    expect(list.text).toContain("Stock feed");
    expect(list.text).not.toContain("Climbing move");
  });

  it("POST refuses an absolute export name with 400 naming the field", async () => {
    const res = await t.request("POST", "/v3/automations/custom", exportDefinition({ name: "/etc/x.csv" }));
    expect(res.status).toBe(400);
    expect(failures(res.body)).toMatch(/^file_configs\[0\]\.name: remote file name "\/etc\/x\.csv" is refused: it is absolute \(allowed: a file name relative to connection\.path/m);
  });

  it("PATCH refuses a connection path that climbs out of the storage and keeps the stored definition", async () => {
    const created = await t.request("POST", "/v3/automations/custom", exportDefinition({ name: "x.csv" }));
    expect(created.status).toBe(200);
    const id = String(created.body.id);
    const res = await t.request("PATCH", `/v3/automations/custom/${id}`, { connection: { type: "sdsftp", path: "../../other-account" } });
    expect(res.status).toBe(400);
    expect(failures(res.body)).toMatch(/^connection\.path: connection\.path "\.\.\/\.\.\/other-account" climbs out of the storage root/m);
    const stored = await t.request("GET", `/v3/automations/custom/${id}`);
    expect(JSON.stringify(stored.body)).not.toContain("other-account");
  });
});

const cliDir = mkdtempSync(path.join(tmpdir(), "conveyor-late-cli-"));
afterAll(() => rmSync(cliDir, { recursive: true, force: true }));

function conveyor(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], { env: { ...process.env, CONVEYOR_DATA_DIR: path.join(cliDir, "data") }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe("the CLI", () => {
  it("conveyor check refuses an absolute export name with exit 2, naming the field", async () => {
    const file = path.join(cliDir, "absolute.json");
    writeFileSync(file, JSON.stringify(exportDefinition({ name: "/var/www/feed.csv" })));
    const res = await conveyor(["check", file]);
    expect(res.code).toBe(2);
    expect(res.stdout + res.stderr).toMatch(/file_configs\[0\]\.name: remote file name "\/var\/www\/feed\.csv" is refused: it is absolute/);
  }, 90_000);

  it("conveyor run --param with a climbing value is refused at run start; nothing connects", async () => {
    let connections = 0;
    const counter = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => counter.listen(0, "127.0.0.1", resolve));
    const address = counter.address();
    const port = address !== null && typeof address !== "string" ? address.port : 0;
    const file = path.join(cliDir, "param.json");
    writeFileSync(
      file,
      JSON.stringify({
        ...exportDefinition({}),
        action: "import",
        connection: { type: "sftp", address: "127.0.0.1", port, username: "u", password: PASSWORD, path: "/in" },
        file_configs: [{ name: "feed\\.csv", field_map: { sku: "SKU" }, identifier: "sku", update: "edit", after_import: "move:<<dest>>" }],
        parameters: [{ name: "dest", value: "done" }],
      }),
    );
    try {
      const res = await conveyor(["run", file, "--param", "dest=../../../etc", "--json"]);
      // A failed run (exit 1), failed before anything connected.
      expect(res.code).toBe(1);
      expect(res.stdout + res.stderr).toContain("unsafe_path");
      expect(res.stdout + res.stderr).toMatch(/file_configs\[0\]\.after_import: after resolving parameters: remote folder \\?"\.\.\/\.\.\/\.\.\/etc\\?" is refused/);
      expect(res.stdout + res.stderr).not.toContain(PASSWORD);
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((resolve) => counter.close(() => resolve()));
    }
  }, 90_000);
});
