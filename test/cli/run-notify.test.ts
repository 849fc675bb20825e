import { execFile } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SmtpCapture } from "../helpers/smtp-capture.js";

/** `conveyor run --notify --email`: the summary reaches a real SMTP server, with no secret in it. */
const dir = mkdtempSync(path.join(tmpdir(), "conveyor-notify-cli-"));
const dataDir = path.join(dir, "data");
const SMTP_PASSWORD = "cli-smtp-Secret-42";
const smtp = new SmtpCapture(SMTP_PASSWORD);
const mails = smtp.mails;

beforeAll(async () => {
  await smtp.start();
  const feeds = path.join(dataDir, "storage", "demo", "feeds");
  mkdirSync(feeds, { recursive: true });
  const feed = path.join(feeds, "feed-1.csv");
  writeFileSync(feed, "guid,title,stock\nN1,Notified part,4\nN2,Other part,5\n");
  utimesSync(feed, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
  writeFileSync(path.join(dir, "notify.json"), JSON.stringify({
    name: "Notify test", slug: "notify-test", active: true, schedule: "0 * * * *", type: "products", action: "import",
    connection: { type: "sdsftp", path: "feeds" },
    file_configs: [{ name: "feed-1\\.csv", identifier: "guid", create: "add", field_map: { guid: "guid", title: "title", stock: "stock" } }],
  }));
  writeFileSync(path.join(dir, "missing.json"), JSON.stringify({
    name: "Missing folder", slug: "missing-folder", active: true, schedule: "0 * * * *", type: "products", action: "import",
    connection: { type: "sdsftp", path: "no-such-feeds" },
    file_configs: [{ name: "feed-1\\.csv", identifier: "guid", create: "add", field_map: { guid: "guid", title: "title", stock: "stock" } }],
  }));
  writeFileSync(path.join(dir, "param.json"), JSON.stringify({
    name: "Param folder", slug: "param-folder", active: true, schedule: "0 * * * *", type: "products", action: "import",
    connection: { type: "sdsftp", path: "<<feed folder>>" },
    parameters: [{ name: "feed folder", value: "", required: true }],
    file_configs: [{ name: "feed-1\\.csv", identifier: "guid", create: "add", field_map: { guid: "guid", title: "title", stock: "stock" } }],
  }));
  writeFileSync(path.join(dir, "local.json"), JSON.stringify({
    name: "Local feed", slug: "local-feed", active: true, schedule: "0 * * * *", type: "products", action: "import",
    file_configs: [{ name: "local-\\d+\\.csv", identifier: "guid", create: "add", field_map: { guid: "guid", title: "title", stock: "stock" } }],
  }));
  writeFileSync(path.join(dir, "local-7.csv"), "guid,title,stock\nL1,Local part,4\nL2,Other local,5\nL3,Third,6\n");
});

function conveyor(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", ...args],
      {
        env: {
          ...process.env,
          CONVEYOR_DATA_DIR: dataDir,
          CONVEYOR_READ_LIMIT: "100000",
          CONVEYOR_WRITE_LIMIT: "100000",
          CONVEYOR_SMTP_URL: smtp.url(),
          ...env,
        },
        timeout: 90_000,
      },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

afterAll(async () => {
  await smtp.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("conveyor run --notify", () => {
  it("mails the run's summary to --email, and never a secret", async () => {
    const result = await conveyor(["run", path.join(dir, "notify.json"), "--notify", "--email", "buyer@shop.test", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const run = JSON.parse(result.stdout) as { id: string; outcome: string };
    expect(run.outcome).toBe("success");
    expect(mails).toHaveLength(1);
    const mail = mails[0];
    expect(mail?.to).toMatchObject({ text: "buyer@shop.test" });
    const text = `${mail?.subject ?? ""}\n${mail?.text ?? ""}`;
    expect(text).toContain("Notify test");
    expect(text).toContain(run.id);
    expect(text + result.stdout + result.stderr).not.toContain(SMTP_PASSWORD);
  });

  it("shows how to fix a failed run in the summary and in the mail", async () => {
    mails.length = 0;
    const result = await conveyor(["run", path.join(dir, "missing.json"), "--notify", "--email", "buyer@shop.test"]);
    expect(result.code, result.stderr).toBe(1);
    // The path is the account's own view of its storage: the server's folder is not the tenant's business.
    const storage = path.join(dataDir, "storage");
    expect(result.stdout).toContain("error (not_found): folder /no-such-feeds does not exist in the account's storage");
    expect(result.stdout).toContain("how to fix: check the connection's path and the file name; both are relative to the account's storage folder");
    expect(result.stdout).not.toContain(storage);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.text).toContain("How to fix: check the connection's path and the file name; both are relative to the account's storage folder");
    expect(mails[0]?.text).not.toContain(storage);
  });

  it("a required parameter without a value is a definition error (exit 2) that --param answers", async () => {
    const missing = await conveyor(["run", path.join(dir, "param.json"), "--debug"]);
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stdout).toContain('missing value for required parameter: "feed folder"');
    expect(missing.stdout).toContain('--param "name=value"');
    const given = await conveyor(["run", path.join(dir, "param.json"), "--debug", "--json", "--param", "feed folder=feeds"]);
    expect(given.code, given.stderr).toBe(0);
    expect((JSON.parse(given.stdout) as { counts: { rows: number } }).counts.rows).toBe(2);
  });

  it("--file feeds an import without a connection, and leaves the file as it was", async () => {
    const local = path.join(dir, "local-7.csv");
    const before = readFileSync(local, "utf8");
    const run = await conveyor(["run", path.join(dir, "local.json"), "--file", local, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const record = JSON.parse(run.stdout) as { counts: { rows: number; create: number }; files: Array<{ name: string }> };
    expect(record.counts).toMatchObject({ rows: 3, create: 3 });
    expect(record.files.map((f) => f.name)).toEqual(["local-7.csv"]);
    expect(readFileSync(local, "utf8")).toBe(before);
    const unmatched = await conveyor(["run", path.join(dir, "local.json"), "--file", path.join(dir, "param.json"), "--debug"]);
    expect(unmatched.code).toBe(2);
    expect(unmatched.stdout).toContain("param.json matches no file config's name");
    const without = await conveyor(["run", path.join(dir, "local.json"), "--debug"]);
    expect(without.code).toBe(2);
    expect(without.stdout).toContain("conveyor run --file");
    const check = await conveyor(["check", path.join(dir, "local.json")]);
    expect(check.stdout).toContain("warning: connection: no connection: only conveyor run --file can feed this import");
  });
});

describe("conveyor run --max-run-time", () => {
  it("cancels a run stuck on a server that never answers, and says which limit ended it", async () => {
    // Answers nothing, ever: the connector's own timeouts are far longer than the limit.
    const server = createServer(() => undefined);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    writeFileSync(path.join(dir, "hung.json"), JSON.stringify({
      name: "Hung feed", slug: "hung-feed", active: true, schedule: "0 * * * *", type: "products", action: "import",
      connection: { type: "http", address: `http://127.0.0.1:${port}/feed.csv`, method: "GET", payload: {} },
      file_configs: [{ name: "feed.csv", identifier: "guid", create: "add", field_map: { guid: "guid", title: "title" } }],
    }));
    try {
      const started = Date.now();
      const result = await conveyor(["run", path.join(dir, "hung.json"), "--max-run-time", "2s", "--json"], { CONVEYOR_ALLOW_PRIVATE_HOSTS: "1" });
      const run = JSON.parse(result.stdout) as { outcome: string; error: { code: string; message: string; hint?: string } };
      expect(run.outcome).toBe("canceled");
      expect(run.error.message).toContain("max_run_time (2.0s)");
      expect(run.error.hint).toContain("--max-run-time");
      expect(result.code).toBe(1);
      expect(Date.now() - started).toBeLessThan(60_000);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 90_000);

  it("refuses --email without --notify, and an --email that is not an address", async () => {
    const alone = await conveyor(["run", path.join(dir, "notify.json"), "--debug", "--email", "buyer@shop.test"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("--notify is not set");
    const wrong = await conveyor(["run", path.join(dir, "notify.json"), "--debug", "--notify", "--email", "notanemail"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("is not an e-mail address");
  }, 60_000);

  it("refuses a duration without a unit, naming the setting", async () => {
    const result = await conveyor(["runs"], { CONVEYOR_MAX_RUN_TIME: "90" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("CONVEYOR_MAX_RUN_TIME");
    expect(result.stderr).toContain("write 90s, 90m or 90h");
  }, 60_000);
});
