import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { encryptValue } from "../../src/definition/index.js";

/** `conveyor check` and `conveyor show` as a user runs them: the real CLI in a child process. */

const dir = mkdtempSync(path.join(tmpdir(), "conveyor-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", ...args],
      { env: { ...process.env, CONVEYOR_DATA_DIR: path.join(dir, "data"), ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function write(name: string, value: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value, null, 2));
  return file;
}

const FIVE_MISTAKES = {
  name: "Five mistakes",
  active: true,
  schedule: "0 25 * * *",
  type: "products",
  action: "import",
  connection: { type: "sftp", address: "h", username: "u", password: "p", path: "/", ssl_ftp: true },
  file_configs: [{ field_map: { sku: "SKU" }, identifier: "sku", create: "begin", delimiter: ";;", vendor_actions: [{ explode: 1 }] }],
};
const FIVE_PATHS = ["connection.ssl_ftp", "file_configs[0].create", "file_configs[0].delimiter", "file_configs[0].vendor_actions[0].explode", "schedule"];

describe("conveyor check", () => {
  it("passes every sample", async () => {
    const samples = readdirSync("samples").filter((f) => f.endsWith(".json")).map((f) => path.join("samples", f));
    const r = await cli(["check", ...samples]);
    expect(r.stdout).toContain(`${samples.length} definitions valid`);
    expect(r.code).toBe(0);
  });

  it("reports all five mistakes of a definition with their paths, and exits 2", async () => {
    const file = write("five.json", FIVE_MISTAKES);
    const good = path.join("samples", "fixed-width-storage.json");
    const r = await cli(["check", file, good]);
    expect(r.code).toBe(2);
    const lines = r.stdout.split("\n").filter((l) => l.startsWith(`${file}: `));
    expect(lines.map((l) => l.slice(file.length + 2).split(":")[0]).sort()).toEqual(FIVE_PATHS);
    expect(r.stdout).toContain(`${good}: ok`);
    expect(r.stdout).toMatch(/allowed: start, add/);
    expect(r.stdout).toContain("5 problems in 1 of 2 definitions");

    const j = await cli(["check", "--json", file, good]);
    expect(j.code).toBe(2);
    const out = JSON.parse(j.stdout) as { files: { file: string; ok: boolean; problems: { path: string; message: string; allowed?: string }[] }[] };
    expect(out.files.map((f) => f.ok)).toEqual([false, true]);
    expect(out.files[0]?.problems.map((p) => p.path).sort()).toEqual(FIVE_PATHS);
  });

  it("warns, without refusing, of an order export with no search", async () => {
    const file = write("all-orders.json", {
      name: "All orders", active: true, schedule: "0 * * * *", type: "orders", action: "export",
      connection: { type: "sdsftp", path: "out" },
      file_configs: [{ name: "orders.csv", field_map: { ordernumber: "Order" } }],
    });
    const r = await cli(["check", file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${file}: ok`);
    expect(r.stdout).toContain(`${file}: warning: file_configs[0].search: no search: every order is exported on every run`);
    const j = JSON.parse((await cli(["check", "--json", file])).stdout) as { files: Array<{ ok: boolean; warnings: Array<{ path: string }> }> };
    expect(j.files[0]).toMatchObject({ ok: true, warnings: [{ path: "file_configs[0].search" }] });
  });

  it("reports wrong change_limits at their paths with what is allowed, and warns of a limit on a field never set", async () => {
    const definition = (limits: unknown) => ({
      name: "Limited feed", active: true, schedule: "0 * * * *", type: "products", action: "import",
      connection: { type: "sdsftp", path: "in" },
      file_configs: [{ name: "stock.csv", field_map: { guid: "sku", stock: "qty", price: "price" }, update: "edit", change_limits: limits }],
    });
    const bad = write("limits-bad.json", definition({ stock: { zeroed: "150%" }, price: { moved: 30, share: "5%" } }));
    const r = await cli(["check", bad]);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(`${bad}: file_configs[0].change_limits.stock.zeroed: "150%" is not a limit`);
    expect(r.stdout).toContain(`${bad}: file_configs[0].change_limits.price.moved: 30 is not a percentage`);
    expect(r.stdout).toMatch(/allowed: a percentage above 0, such as "30%"/);
    expect(r.stdout).toContain("2 problems in 1 of 1 definition");

    const unmapped = write("limits-unmapped.json", definition({ wieght: { moved: "50%" } }));
    const w = await cli(["check", unmapped]);
    expect(w.code).toBe(0);
    expect(w.stdout).toContain(`${unmapped}: warning: file_configs[0].change_limits.wieght: "wieght" is not set by this file config, so its limits never apply`);
  });

  it("warns of a credential written in clear into the address or a header, without echoing it", async () => {
    const file = write("keyed-feed.json", {
      name: "Keyed feed", active: true, schedule: "0 * * * *", type: "products", action: "import",
      connection: { type: "http", address: "https://feeds.example/stock.csv?apikey=clear-key-9911&format=csv", method: "GET", payload: {}, headers: { "X-Api-Key": "clear-hdr-5522", Authorization: "<<auth>>" } },
      parameters: [{ name: "auth", value: "enc-me", encrypted: false }],
      file_configs: [{ name: "stock.csv", field_map: { guid: "sku" }, update: "edit" }],
    });
    const r = await cli(["check", file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${file}: warning: connection.address: carries a credential in clear (apikey)`);
    expect(r.stdout).toContain(`${file}: warning: connection.headers.X-Api-Key: holds a credential in clear`);
    expect(r.stdout).not.toContain("connection.headers.Authorization");
    expect(r.stdout).toMatch(/encrypted: true/);
    for (const secret of ["clear-key-9911", "clear-hdr-5522"]) expect(r.stdout).not.toContain(secret);
  });

  it("points at the line and column of a JSON syntax error", async () => {
    const file = write("syntax.json", '{\n  "name": "x",\n  "active": true,\n}\n');
    const r = await cli(["check", file]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/line 4, column 1/);
  });

  it("refuses an unknown flag and explains itself with --help", async () => {
    const bad = await cli(["check", "--strict", "samples/fixed-width-storage.json"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown option '--strict'/);
    const help = await cli(["check", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage: conveyor check \[options\] <files\.\.\.>/);
    // The settings flags every command takes are listed with each command's own.
    expect(help.stdout).toMatch(/Global Options:[\s\S]*--data-dir <value>/);
  });
});

describe("conveyor show", () => {
  const key = Buffer.alloc(32, 3);
  const tokenPlain = "tok-very-secret-4711";
  const tokenStored = encryptValue(tokenPlain, key);
  const definition = {
    name: "Secret holder",
    active: 1,
    schedule: "0 * * * *",
    type: "products",
    action: "import",
    connection: { type: "sftp", address: "<<sftp host>>", port: "<<sftp port>>", username: "u", password: "<<sftp password>>", path: "/in/<<api token>>" },
    file_configs: [{ field_map: { sku: "SKU" }, identifier: "sku", update: true, name: "stock_{{DATE}}\\.csv" }],
    parameters: [
      { name: "sftp host", value: "127.0.0.1" },
      { name: "sftp port", value: "2222" },
      { name: "sftp password", value: "pw-plain-9876" },
      { name: "api token", value: tokenStored, encrypted: true },
    ],
  };

  it("prints the resolved definition and never a password or an encrypted value", async () => {
    const file = write("secret.json", definition);
    const r = await cli(["show", file, "--param", "sftp port=2200"], { CONVEYOR_SECRET_KEY: key.toString("hex") });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const shown = JSON.parse(r.stdout) as { connection: Record<string, unknown>; file_configs: { name: string; update: string }[]; parameters: { value: unknown }[] };
    expect(shown.connection).toMatchObject({ address: "127.0.0.1", port: 2200, password: "********" });
    expect(shown.file_configs[0]?.name).toMatch(/^stock_\d{4}-\d{2}-\d{2}\\\.csv$/);
    expect(shown.file_configs[0]?.update).toBe("edit");
    for (const secret of ["pw-plain-9876", tokenPlain, tokenStored, tokenStored.slice(7, 40)]) {
      expect(r.stdout).not.toContain(secret);
      expect(r.stderr).not.toContain(secret);
    }
  });

  it("shows the unresolved form masked too", async () => {
    const file = write("secret2.json", definition);
    const r = await cli(["show", file, "--unresolved", "--json"]);
    expect(r.code).toBe(0);
    for (const secret of ["pw-plain-9876", tokenStored]) expect(r.stdout).not.toContain(secret);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("names every missing parameter at once, and refuses a parameter the automation lacks", async () => {
    const file = write("missing.json", { ...definition, parameters: definition.parameters.map((p) => (p.name === "api token" ? p : { ...p, value: "" })) });
    const r = await cli(["show", file], { CONVEYOR_SECRET_KEY: key.toString("hex") });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/"sftp host", "sftp port", "sftp password"/);
    const unknown = await cli(["show", file, "--param", "ftp host=x"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no such parameter/);
  });

  it("refuses to decrypt with the wrong key, without printing the value", async () => {
    const file = write("wrongkey.json", definition);
    const r = await cli(["show", file], { CONVEYOR_SECRET_KEY: Buffer.alloc(32, 4).toString("hex") });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/another key, or it was altered/);
    expect(r.stderr + r.stdout).not.toContain(tokenPlain);
  });
});
