import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../daemon/daemon-harness.js";
import { daemonBanner } from "../helpers/daemon-banner.js";
import { PgSchemas } from "../helpers/postgres.js";
import { TestSftpServer } from "../helpers/sftp-server.js";
import { metadataStore } from "../../src/pipeline/metadata.js";
import { SqliteStore } from "../../src/state/sqlite.js";

/**
 * Secrets at rest (issue #24): the data folder is the daemon user's alone, and
 * a connection password is stored sealed with the secret key, in a new
 * database and in one an older build wrote, while runs still connect with it.
 */

const PASSWORD = "sftp-Clear-Pw-90412";
const FED = "fed-Param-Pw-77310";
const TOKEN_HEADER = "Bearer hdr-Secret-55123";
const FEED = ["sku,qty", "A1,5"].join("\n");

let server: TestSftpServer;
let remote: string;
const pgs = new PgSchemas();

beforeAll(async () => {
  remote = mkdtempSync(path.join(tmpdir(), "conveyor-atrest-sftp-"));
  mkdirSync(path.join(remote, "outgoing"));
  writeFileSync(path.join(remote, "outgoing", "stock.csv"), FEED);
  server = await new TestSftpServer({ root: remote, username: "merchant", password: PASSWORD }).start();
});

afterAll(async () => {
  await server.close();
  await pgs.end();
  rmSync(remote, { recursive: true, force: true });
});

/** An sftp import whose password is written in clear (not an `encrypted` parameter). */
function sftpDefinition(name: string, password: string, parameters: unknown[] = []): Record<string, unknown> {
  return {
    name,
    active: false,
    schedule: "0 3 * * *",
    type: "products",
    action: "import",
    connection: { type: "sftp", address: "127.0.0.1", port: server.port, username: "merchant", password, path: "/outgoing" },
    file_configs: [{ name: "stock\\.csv", min_age: 0, field_map: { sku: "sku", stock: "qty" }, identifier: "sku", update: "edit" }],
    parameters,
  };
}

const ENV = { CONVEYOR_ALLOW_PRIVATE_HOSTS: "true" };

function mode(file: string): number {
  return statSync(file).mode & 0o777;
}

/** Every file and folder under `dir` whose mode lets group or others in. */
function widened(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    if (!entry.isFile() && !entry.isDirectory()) continue;
    if ((mode(full) & 0o077) !== 0) out.push(`${path.relative(dir, full)} ${mode(full).toString(8)}`);
  }
  return out;
}

/** The database files as bytes on disk, -wal and -shm included. */
function dbBytes(file: string): Buffer {
  return Buffer.concat(["", "-wal", "-shm"].map((s) => (existsSync(file + s) ? readFileSync(file + s) : Buffer.alloc(0))));
}

/** Files under `dir` whose bytes contain `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    if (entry.isFile() && readFileSync(full).includes(needle)) out.push(path.relative(dir, full));
  }
  return out;
}

async function runDebug(t: TestDaemon, id: number): Promise<Record<string, unknown>> {
  const res = await t.request("GET", `/v3/automations/custom/${id}/run?debug=1&wait=60`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe("file modes of the data folder", () => {
  it("a daemon started under umask 022 keeps every file 0600 and every folder 0700, after a run too", async () => {
    const previous = process.umask(0o022);
    const t = await startTestDaemon({ env: ENV });
    try {
      const data = t.settings.dataDir;
      expect(mode(data)).toBe(0o700);
      for (const file of ["state.db", "state.db-wal", "state.db-shm", "secret.key", "embedded/service.db", "embedded/api-token"]) {
        expect(mode(path.join(data, file)), file).toBe(0o600);
      }
      expect(mode(path.join(data, "embedded"))).toBe(0o700);
      expect(mode(t.settings.storage)).toBe(0o700);
      const created = await t.request("POST", "/v3/automations/custom", sftpDefinition("Modes", PASSWORD));
      expect(created.status, created.text).toBe(200);
      const run = await runDebug(t, Number(created.body.id));
      expect(run.result, JSON.stringify(run)).toBe("success");
      // The run's work folder and debug files included.
      expect(widened(data)).toEqual([]);
    } finally {
      await t.close();
      process.umask(previous);
    }
  });

  it("an existing 0644 state.db in a 0755 folder is narrowed at start", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "conveyor-atrest-old-"));
    const data = path.join(dir, "data");
    mkdirSync(data, { mode: 0o755 });
    chmodSync(data, 0o755);
    const old = new Database(path.join(data, "state.db"));
    old.pragma("journal_mode = WAL");
    old.exec("CREATE TABLE leftover (x TEXT)");
    old.close();
    chmodSync(path.join(data, "state.db"), 0o644);
    writeFileSync(path.join(data, "secret.key"), `${"ab".repeat(32)}\n`, { mode: 0o644 });
    chmodSync(path.join(data, "secret.key"), 0o644);
    // Not Conveyor's: a data folder set to a shared parent must not change its neighbours' modes.
    mkdirSync(path.join(data, "someone-elses"));
    chmodSync(path.join(data, "someone-elses"), 0o755);
    writeFileSync(path.join(data, "notes.txt"), "mine\n");
    chmodSync(path.join(data, "notes.txt"), 0o644);
    const t = await startTestDaemon({ dir, env: ENV });
    try {
      expect(mode(data)).toBe(0o700);
      expect(mode(path.join(data, "state.db"))).toBe(0o600);
      expect(mode(path.join(data, "state.db-wal"))).toBe(0o600);
      expect(mode(path.join(data, "secret.key"))).toBe(0o600);
      expect(mode(path.join(data, "someone-elses"))).toBe(0o755);
      expect(mode(path.join(data, "notes.txt"))).toBe(0o644);
    } finally {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("connection secrets encrypted at rest", () => {
  it("a clear sftp password stored through the API is in no database file, is masked as before, and the run connects", async () => {
    const t = await startTestDaemon({ env: ENV });
    try {
      const created = await t.request("POST", "/v3/automations/custom", sftpDefinition("Clear password", PASSWORD));
      expect(created.status, created.text).toBe(200);
      const fed = sftpDefinition("Fed password", "<<sftp password>>", [{ name: "sftp password", value: FED, encrypted: false }]);
      const second = await t.request("POST", "/v3/automations/custom", fed);
      expect(second.status, second.text).toBe(200);

      // The listing shows connections: masked as before sealing.
      const listed = await t.request("GET", "/v3/automations/custom?sort=id");
      expect(listed.status, listed.text).toBe(200);
      expect(listed.text).not.toContain(PASSWORD);
      expect(listed.text).not.toContain(FED);
      expect(listed.text).toContain('"password":"********"');

      const run = await runDebug(t, Number(created.body.id));
      expect(run.result, JSON.stringify(run)).toBe("success");
      // A run of a definition whose password is a parameter: the sealed parameter is opened for the run.
      server.loginAttempts = 0;
      const fedRun = await t.request("GET", `/v3/automations/custom/${String(second.body.id)}/run?debug=1&wait=60`);
      // The server knows only PASSWORD: the fed one is refused, which proves the run read FED, not its ciphertext.
      expect(String(JSON.stringify(fedRun.body))).toMatch(/credentials|authentication|password/i);
      expect(server.loginAttempts).toBeGreaterThan(0);

      const stateDb = path.join(t.settings.dataDir, "state.db");
      for (const secret of [PASSWORD, FED]) {
        expect(dbBytes(stateDb).includes(secret), secret).toBe(false);
        expect(filesContaining(t.settings.dataDir, secret)).toEqual([]);
      }
      const db = new Database(stateDb, { readonly: true });
      const bodies = db.prepare("SELECT body FROM daemon_automations ORDER BY id").pluck().all() as string[];
      db.close();
      expect(bodies.join("\n")).toMatch(/"password":"enc:v1:/);
      expect(bodies.join("\n")).toMatch(/"value":"enc:v1:/);
    } finally {
      await t.close();
    }
  });

  it("a secret header and a URL with credentials are sealed too", async () => {
    const t = await startTestDaemon({ env: ENV });
    try {
      const body = {
        name: "Header feed",
        active: false,
        schedule: "0 3 * * *",
        type: "products",
        action: "import",
        connection: { type: "http", address: "https://feeds.example.com/stock.csv?apikey=url-Secret-31337", headers: { Authorization: TOKEN_HEADER, Accept: "text/csv" }, payload: {} },
        file_configs: [{ name: "stock.csv", field_map: { sku: "sku", stock: "qty" }, identifier: "sku", update: "edit" }],
        parameters: [],
      };
      const created = await t.request("POST", "/v3/automations/custom", body);
      expect(created.status, created.text).toBe(200);
      const stateDb = path.join(t.settings.dataDir, "state.db");
      for (const secret of ["hdr-Secret-55123", "url-Secret-31337"]) expect(dbBytes(stateDb).includes(secret), secret).toBe(false);
      expect(dbBytes(stateDb).includes("text/csv")).toBe(true);
      const got = await t.request("GET", "/v3/automations/custom?sort=id");
      expect(got.status, got.text).toBe(200);
      expect(got.text).not.toContain("hdr-Secret-55123");
      expect(got.text).not.toContain("url-Secret-31337");
      expect(got.text).toContain("feeds.example.com");
      // The listing's connection sent back as it is keeps the real credentials.
      const listed = (got.body.automations as Array<Record<string, unknown>>).find((a) => a.id === String(created.body.id));
      const patched = await t.request("PATCH", `/v3/automations/custom/${String(created.body.id)}`, { connection: (listed?.config as { connection: unknown }).connection });
      expect(patched.status, patched.text).toBe(200);
      const opened = t.daemon.definitions.effective(await t.daemon.definitions.own("demo", "custom", Number(created.body.id))).raw.connection;
      expect(opened).toMatchObject({ address: body.connection.address, headers: body.connection.headers });
    } finally {
      await t.close();
    }
  });
});

describe("automation metadata", () => {
  it("an OAuth access token is stored sealed, read back in clear, and an old clear one is sealed at the next read", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "conveyor-atrest-meta-"));
    const file = path.join(dir, "state.db");
    const key = Buffer.alloc(32, 7);
    const store = new SqliteStore(file);
    try {
      const meta = await metadataStore(store, "a1", key);
      await meta.set("oauth", { client_id: "shop", access_token: "oauth-Access-60606", expires_at: null });
      expect(dbBytes(file).includes("oauth-Access-60606")).toBe(false);
      expect((await metadataStore(store, "a1", key)).get("oauth")).toMatchObject({ access_token: "oauth-Access-60606" });
      // What an older build wrote: the token in clear.
      await store.setMetadata("a2", { oauth: { client_id: "shop", access_token: "oauth-Old-70707" } });
      expect((await metadataStore(store, "a2", key)).get("oauth")).toMatchObject({ access_token: "oauth-Old-70707" });
      expect(JSON.stringify(await store.getMetadata("a2"))).toMatch(/"access_token":"enc:v1:/);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("installed automations", () => {
  it("the installer's value of a parameter that feeds the published password is sealed, and the run connects with it", async () => {
    const shared = { ...sftpDefinition("Shared sftp", "<<sftp password>>", [{ name: "sftp password", value: null, encrypted: false, required: true }]), shared_id: 9101 };
    const t = await startTestDaemon({ env: ENV, published: { "shared.json": shared } });
    try {
      const res = await t.request("POST", "/v3/automations/installed", { shared_id: 9101, active: false, parameters: [{ name: "sftp password", value: PASSWORD, encrypted: false }] });
      expect(res.status, res.text).toBe(200);
      expect(dbBytes(path.join(t.settings.dataDir, "state.db")).includes(PASSWORD)).toBe(false);
      const shown = await t.request("GET", "/v3/automations/installed");
      expect(shown.text).not.toContain(PASSWORD);
      const run = await t.request("GET", `/v3/automations/installed/${String(res.body.id)}/run?debug=1&wait=60`);
      expect(run.body.result, run.text).toBe("success");
    } finally {
      await t.close();
    }
  });
});

describe("a database an older build wrote is migrated at start", () => {
  it("SQLite: a clear row is sealed in place, once, and no clear copy stays in state.db or state.db-wal", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "conveyor-atrest-migrate-"));
    try {
      const first = await startTestDaemon({ dir, env: ENV });
      await first.close();
      const stateDb = path.join(dir, "data", "state.db");
      const old = new Database(stateDb);
      const body = sftpDefinition("Old build", PASSWORD, [{ name: "unused", value: "plain", encrypted: false }]);
      const at = "2025-01-01T00:00:00.000Z";
      const id = Number(old.prepare("INSERT INTO daemon_automations (account, kind, slug, body, created, last_modified) VALUES ('demo', 'custom', 'old-build', ?, ?, ?)").run(JSON.stringify(body), at, at).lastInsertRowid);
      old.close();
      expect(dbBytes(stateDb).includes(PASSWORD)).toBe(true);

      const second = await startTestDaemon({ dir, env: ENV });
      let sealedOnce = "";
      try {
        expect(dbBytes(stateDb).includes(PASSWORD)).toBe(false);
        const row = new Database(stateDb, { readonly: true }).prepare("SELECT body, last_modified FROM daemon_automations WHERE id = ?").get(id) as { body: string; last_modified: string };
        sealedOnce = row.body;
        expect(row.body).toMatch(/"password":"enc:v1:/);
        expect(row.last_modified).toBe(at);
        // Still the same definition: it lists, masks and runs.
        const run = await runDebug(second, id);
        expect(run.result, JSON.stringify(run)).toBe("success");
      } finally {
        await second.close();
      }
      // Idempotent: a third start leaves the sealed row as it is (a new seal would change the random IV).
      const third = await startTestDaemon({ dir, env: ENV });
      await third.close();
      const again = new Database(stateDb, { readonly: true }).prepare("SELECT body FROM daemon_automations WHERE id = ?").pluck().get(id) as string;
      expect(again).toBe(sealedOnce);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("PostgreSQL: a clear row is sealed in place at start", async () => {
    const schema = pgs.fresh();
    const env = { ...ENV, CONVEYOR_DATABASE_URL: pgs.url(schema), CONVEYOR_API_USER: "demo", CONVEYOR_API_TOKEN: "pg-demo-token-123", CONVEYOR_SECRET_KEY: "cd".repeat(32) };
    const first = await startTestDaemon({ env });
    await first.close();
    const at = "2025-01-01T00:00:00.000Z";
    const inserted = await pgs.query<{ id: number }>(
      `INSERT INTO "${schema}".daemon_automations (account, kind, slug, body, created, last_modified) VALUES ('demo', 'custom', 'old-pg', $1, $2, $2) RETURNING id`,
      [JSON.stringify(sftpDefinition("Old pg", PASSWORD)), at],
    );
    const id = inserted.rows[0]?.id;
    const second = await startTestDaemon({ env });
    try {
      const { rows } = await pgs.query<{ body: string }>(`SELECT body::text AS body FROM "${schema}".daemon_automations WHERE id = $1`, [id]);
      expect(rows[0]?.body).not.toContain(PASSWORD);
      expect(rows[0]?.body).toMatch(/"password":"enc:v1:/);
      const got = await second.request("GET", `/v3/automations/custom/${String(id)}`);
      expect(got.status, got.text).toBe(200);
    } finally {
      await second.close();
    }
  });
});

function banner(data: string, args: string[] = []): Promise<string> {
  return daemonBanner(data, {}, args);
}

describe("the start banner", () => {
  it("prints the generated token on the first start only, then says where it is and how to print it", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "conveyor-atrest-banner-"));
    try {
      const data = path.join(dir, "data");
      const firstStart = await banner(data);
      const token = readFileSync(path.join(data, "embedded", "api-token"), "utf8").trim();
      expect(firstStart).toContain(`API token: ${token}`);
      expect(firstStart).toContain("printed on this first start only");
      const secondStart = await banner(data);
      expect(secondStart).not.toContain(token);
      expect(secondStart).toContain(`API token: kept in ${path.join(data, "embedded", "api-token")}`);
      expect(secondStart).toContain("conveyor daemon --show-token");
      expect(await banner(data, ["--show-token"])).toContain(`API token: ${token}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
