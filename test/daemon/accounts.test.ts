import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { AccountStore } from "../../src/daemon/accounts.js";
import { SqliteDaemonDb } from "../../src/daemon/daemon-db-sqlite.js";
import { loadSecretKey } from "../../src/definition/index.js";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(path.join(tmpdir(), "conveyor-accounts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function dbBytes(file: string): Buffer {
  return Buffer.concat([readFileSync(file), ...(existsSync(`${file}-wal`) ? [readFileSync(`${file}-wal`)] : [])]);
}

describe("accounts", () => {
  it("keeps tokens encrypted, verifies pairs, refuses unsafe user names", async () => {
    const file = path.join(dir, "unit", "state.db");
    const db = SqliteDaemonDb.open(file);
    const accounts = new AccountStore(db.accounts, loadSecretKey({ dataDir: path.join(dir, "unit"), secretKey: undefined }));
    const generated = await accounts.add("shop-a");
    expect(generated).toMatch(/^[0-9a-f]{48}$/);
    await accounts.add("shop-b", "given-token-123");
    expect(await accounts.verify("shop-a", generated)).toBe(true);
    expect(await accounts.verify("shop-a", "given-token-123")).toBe(false);
    expect(await accounts.verify("nobody", generated)).toBe(false);
    expect((await accounts.credentials("shop-b"))?.apiToken).toBe("given-token-123");
    await expect(accounts.add("../etc")).rejects.toThrow(/not allowed/);
    const bytes = dbBytes(file);
    expect(bytes.includes(Buffer.from(generated))).toBe(false);
    expect(bytes.includes(Buffer.from("given-token-123"))).toBe(false);
    expect(await accounts.remove("shop-b")).toBe(true);
    expect((await accounts.list()).map((a) => a.apiUser)).toEqual(["shop-a"]);
    await db.close();
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
