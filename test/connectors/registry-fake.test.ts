import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConnector, registerConnector } from "../../connectors/index.js";
import { maskAutomation, parseAutomation, resolveAutomation } from "../../src/definition/index.js";
import { MASK, maskSecrets } from "../../src/secrets.js";
import { FAKE_PASSCODE, FakeConnector, fakeDropSpec, fakeSpec } from "../helpers/fake-connector.js";
import { connectorConformance } from "./conformance.js";
import { capturingContext, folderFiles, removeDir, tempDir } from "./conformance-kit.js";

/**
 * A connector type registered by a test alone (test/helpers/fake-connector.ts):
 * with its spec and no edit to src/, it is validated, masked, listed by
 * `conveyor ls` and passes the shared conformance suite like a built-in type.
 */
const unregister = [registerConnector(fakeSpec), registerConnector(fakeDropSpec)];
afterAll(() => unregister.reverse().forEach((undo) => undo()));

const dir = mkdtempSync(path.join(tmpdir(), "conveyor-fake-"));
const served = path.join(dir, "served");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function definition(connection: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "fake feed",
    active: false,
    schedule: "0 5 * * *",
    type: "products",
    action: "import",
    connection,
    file_configs: [{ name: "/stock.*\\.csv/", select: "latest", field_map: { sku: "sku", stock: "qty" }, identifier: "sku", update: "edit", ...extra }],
    parameters: [{ name: "code", value: FAKE_PASSCODE }],
  };
}

function problems(raw: unknown): Record<string, string> {
  const parsed = parseAutomation(raw);
  return parsed.ok ? {} : Object.fromEntries(parsed.problems.map((p) => [p.path, p.message]));
}

describe("a registered fake connector type", () => {
  it("is validated from its spec: its keys, their shapes and what it requires", () => {
    expect(parseAutomation(definition({ type: "fake", root: served, passcode: "<<code>>" })).ok).toBe(true);
    expect(problems(definition({ type: "fake", root: served }))).toEqual({ "connection.passcode": "required for a fake connection" });
    expect(problems(definition({ type: "fake", root: served, passcode: 5 }))["connection.passcode"]).toBe("5 is not text");
    expect(problems(definition({ type: "fake", root: served, passcode: "p", options: { nope: 1 } }))["connection.options.nope"]).toMatch(/unknown key "nope" in connection.options/);
    expect(problems(definition({ type: "fake", root: served, passcode: "p", host_key: `SHA256:${"a".repeat(43)}` }))["connection.host_key"]).toBe('"host_key" does not apply to a fake connection');
    expect(problems(definition({ type: "fake", root: served, passcod: "p" }))["connection.passcod"]).toBe('unknown key "passcod" in connection: did you mean "passcode"?');
    // A built-in type does not read the fake's keys.
    expect(problems(definition({ type: "sdsftp", path: "in", passcode: "p" }))["connection.passcode"]).toBe('"passcode" does not apply to a sdsftp connection');
  });

  it("takes a placeholder for a key its spec declares deferrable, and checks it once resolved", () => {
    const raw = { ...definition({ type: "fake", root: served, passcode: "<<code>>", retries: "<<tries>>" }) };
    raw.parameters = [{ name: "code", value: FAKE_PASSCODE }, { name: "tries", value: "3" }];
    const parsed = parseAutomation(raw);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    expect(resolveAutomation(parsed.automation, { runId: "r1", now: new Date() }).connection?.retries).toBe(3);
    expect(problems(definition({ type: "fake", root: served, passcode: "p", retries: 12 }))["connection.retries"]).toMatch(/not a whole number from 0 to 9/);
  });

  it("refuses up front what its spec says it cannot do, naming the field", () => {
    const parsed = parseAutomation(definition({ type: "fakedrop", root: served, passcode: "p" }, { after_import: "delete" }));
    expect(parsed.ok ? [] : parsed.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      "connection.type: the fake drop box connector cannot list, which an import needs",
      "connection.type: the fake drop box connector cannot download, which an import needs",
      "file_configs[0].after_import: the fake drop box connector cannot delete",
    ]);
    expect(parseAutomation({ ...definition({ type: "fakedrop", root: served, passcode: "p" }), action: "export", file_configs: [{ name: "out.csv", field_map: { sku: "sku" } }] }).ok).toBe(true);
  });

  it("masks its secret field and the parameter feeding it, and registers it at run start", () => {
    const parsed = parseAutomation(definition({ type: "fake", root: served, passcode: "<<code>>" }));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const masked = maskAutomation(parsed.automation);
    expect(masked.connection?.passcode).toBe(MASK);
    expect(masked.parameters[0]?.value).toBe(MASK);
    const resolved = resolveAutomation(parsed.automation, { runId: "r1", now: new Date() });
    expect(resolved.connection?.passcode).toBe(FAKE_PASSCODE);
    expect(maskSecrets(`login with ${FAKE_PASSCODE}`)).toBe(`login with ${MASK}`);
  });

  it("is built by the registry, which refuses what the spec leaves out", async () => {
    const drop = createConnector({ type: "fakedrop", path: "", root: served, passcode: FAKE_PASSCODE }, capturingContext().context);
    const err = await drop.delete({ name: "a", path: "a", size: 0, modified: null }).then(() => null, (e: unknown) => e);
    expect(err).toMatchObject({ code: "protocol", message: "delete is not supported for fake drop box connections" });
  });
});

describe("settings a connector receives", () => {
  it("are the ones its spec names, no more", () => {
    let seen: object | undefined;
    const undo = registerConnector({
      ...fakeSpec,
      type: "fakeprobe",
      settings: ["smtpUrl"],
      create: (connection, context) => {
        seen = context.settings;
        return new FakeConnector(connection, context);
      },
    });
    createConnector({ type: "fakeprobe", path: "", root: served, passcode: FAKE_PASSCODE }, capturingContext().context);
    undo();
    expect(Object.keys(seen ?? {})).toEqual(["smtpUrl"]);
  });
});

describe("conveyor ls with the fake type", () => {
  const file = path.join(dir, "fake-feed.json");
  beforeAll(() => {
    mkdirSync(path.join(served, "in"), { recursive: true });
    for (const [name, day] of [["stock-1.csv", 1], ["stock-2.csv", 2], ["notes.txt", 3]] as const) {
      const at = path.join(served, "in", name);
      writeFileSync(at, "sku,qty\nA,1\n");
      utimesSync(at, new Date(Date.UTC(2026, 0, day)), new Date(Date.UTC(2026, 0, day)));
    }
    writeFileSync(file, JSON.stringify(definition({ type: "fake", root: served, path: "in", passcode: "<<code>>" })));
  });

  it("connects with the fake's spec and lists what the file config would pick", async () => {
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ["--import", "tsx", "--import", "./test/helpers/fake-connector-register.ts", "src/cli.ts", "ls", file, "--json"],
        { env: { ...process.env, CONVEYOR_DATA_DIR: path.join(dir, "data") }, timeout: 90_000 },
        (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
      );
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(FAKE_PASSCODE);
    const out = JSON.parse(r.stdout) as { connection: Record<string, string>; files: Array<{ name: string; status: string }> };
    expect(out.connection).toEqual({ server: "fake", folder: "in" });
    expect(Object.fromEntries(out.files.map((f) => [f.name, f.status]))).toEqual({ "stock-2.csv": "picked", "stock-1.csv": "not the latest", "notes.txt": "no match" });
  }, 120_000);
});

connectorConformance("fake", async () => {
  const root = await tempDir("fake-root");
  return {
    connection: { type: "fake", path: "", root, passcode: FAKE_PASSCODE },
    // Through the registry, as a run builds it: the spec's factory and capabilities.
    create: (conn, ctx) => createConnector(conn, ctx),
    files: folderFiles(root),
    transferSize: 8 * 1024 * 1024,
    unsupported: {
      password: "the fake checks a passcode; a wrong one is refused by test() (see refusals)",
      faults: "the fake has no network to break",
    },
    refusals: [{ name: "wrong passcode", overrides: { passcode: "wrong-passcode" }, code: "auth" }],
    async close() {
      await removeDir(root);
    },
  };
});
