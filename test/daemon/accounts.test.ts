import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { AccountStore } from "../../src/daemon/accounts.js";
import { openDaemonDb } from "../../src/daemon/daemon-db.js";
import { loadSecretKey } from "../../src/definition/index.js";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(path.join(tmpdir(), "conveyor-accounts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function dbBytes(file: string): Buffer {
  return Buffer.concat([readFileSync(file), ...(existsSync(`${file}-wal`) ? [readFileSync(`${file}-wal`)] : [])]);
}

describe("accounts", () => {
  it("keeps tokens encrypted, verifies pairs, refuses unsafe user names", () => {
    const file = path.join(dir, "unit", "state.db");
    const db = openDaemonDb(file);
    const accounts = new AccountStore(db, loadSecretKey({ dataDir: path.join(dir, "unit"), secretKey: undefined }));
    const generated = accounts.add("shop-a");
    expect(generated).toMatch(/^[0-9a-f]{48}$/);
    accounts.add("shop-b", "given-token-123");
    expect(accounts.verify("shop-a", generated)).toBe(true);
    expect(accounts.verify("shop-a", "given-token-123")).toBe(false);
    expect(accounts.verify("nobody", generated)).toBe(false);
    expect(accounts.credentials("shop-b")?.apiToken).toBe("given-token-123");
    expect(() => accounts.add("../etc")).toThrow(/not allowed/);
    const bytes = dbBytes(file);
    expect(bytes.includes(Buffer.from(generated))).toBe(false);
    expect(bytes.includes(Buffer.from("given-token-123"))).toBe(false);
    expect(accounts.remove("shop-b")).toBe(true);
    expect(accounts.list().map((a) => a.apiUser)).toEqual(["shop-a"]);
    db.close();
  });

  it("conveyor accounts add|list|remove", async () => {
    const env = { ...process.env, CONVEYOR_DATA_DIR: path.join(dir, "cli") };
    const cli = (...args: string[]) => run(process.execPath, ["--import", "tsx", "src/cli.ts", "accounts", ...args], { cwd: ROOT, env });
    const added = await cli("add", "merchant", "--json");
    const { user, token } = JSON.parse(added.stdout) as { user: string; token: string };
    expect(user).toBe("merchant");
    expect(token).toMatch(/^[0-9a-f]{48}$/);
    await cli("add", "partner", "--token", "partner-token-777");
    const listed = await cli("list", "--json");
    expect((JSON.parse(listed.stdout) as Array<{ user: string }>).map((a) => a.user)).toEqual(["merchant", "partner"]);
    expect(listed.stdout).not.toContain(token);
    expect(listed.stdout).not.toContain("partner-token-777");
    await cli("remove", "partner");
    await expect(cli("remove", "partner")).rejects.toMatchObject({ code: 2 });
  }, 60_000);
});
