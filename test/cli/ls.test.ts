import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestSftpServer } from "../helpers/sftp-server.js";

/** `conveyor ls` as a user runs it, against a real SFTP server on loopback. */
const dir = mkdtempSync(path.join(tmpdir(), "conveyor-ls-"));
const root = path.join(dir, "sftp");
const PASSWORD = "ls-test-password-77";
let server: TestSftpServer;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", ...args],
      { env: { ...process.env, CONVEYOR_DATA_DIR: path.join(dir, "data"), CONVEYOR_ALLOW_PRIVATE_HOSTS: "1" }, timeout: 90_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const params = (port: number, password: string): string[] => [
  "--param", "sftp host=127.0.0.1", "--param", `sftp port=${port}`, "--param", "sftp user=merchant", "--param", `sftp password=${password}`,
];

beforeAll(async () => {
  mkdirSync(path.join(root, "outgoing"), { recursive: true });
  const old = path.join(root, "outgoing", "inventory_20260201.csv");
  copyFileSync("samples/files/acme/inventory_20260301.csv", old);
  utimesSync(old, new Date("2026-02-01T00:00:00Z"), new Date("2026-02-01T00:00:00Z"));
  const latest = path.join(root, "outgoing", "inventory_20260301.csv");
  copyFileSync("samples/files/acme/inventory_20260301.csv", latest);
  utimesSync(latest, new Date("2026-03-01T00:00:00Z"), new Date("2026-03-01T00:00:00Z"));
  writeFileSync(path.join(root, "outgoing", "inventory_20260302.csv"), "still uploading");
  writeFileSync(path.join(root, "outgoing", "notes.txt"), "not a feed");
  server = await new TestSftpServer({ root, username: "merchant", password: PASSWORD }).start();
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("conveyor ls", () => {
  it("lists what the file config would pick and why every other file is left out", async () => {
    const r = await cli(["ls", "samples/supplier-stock-sftp.json", "--json", ...params(server.port, PASSWORD)]);
    expect(r.stderr).not.toContain(PASSWORD);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { connection: Record<string, string>; files: Array<{ name: string; status: string }> };
    const status = Object.fromEntries(out.files.map((f) => [f.name, f.status]));
    expect(status).toEqual({
      "inventory_20260301.csv": "picked",
      "inventory_20260201.csv": "not the latest",
      "inventory_20260302.csv": expect.stringContaining("too young"),
      "notes.txt": "no match",
    });
    expect(out.connection.host_key).toBe(server.fingerprint);
  });

  it("exits non-zero with the connector's error when it cannot log in, and never prints the password", async () => {
    const r = await cli(["ls", "samples/supplier-stock-sftp.json", ...params(server.port, "wrong-password-123")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/auth|password|login/i);
    expect(r.stderr + r.stdout).not.toContain("wrong-password-123");
  });
});
