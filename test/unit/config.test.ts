import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadSettings, settingsTable, SETTINGS } from "../../src/config.js";
import { ConveyorError } from "../../src/errors.js";
import { maskSecrets, MASK } from "../../src/secrets.js";

function tmp(): string {
  return mkdtempSync(path.join(tmpdir(), "conveyor-config-"));
}

describe("settings", () => {
  it("has the spec's defaults", () => {
    const cwd = tmp();
    const s = loadSettings({ cwd, env: {} });
    expect(s.dataDir).toBe(path.join(cwd, ".conveyor"));
    expect(s.embedded).toBe(true);
    expect(s.integration).toBe("conveyor");
    expect(s.listen).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(loadSettings({ cwd, env: { CONVEYOR_LISTEN: "[::1]:9090" } }).listen).toEqual({ host: "::1", port: 9090 });
    expect(() => loadSettings({ cwd, env: { CONVEYOR_LISTEN: "::1:9090" } })).toThrow(/\[::1\]:8080/);
    expect(s.serviceListen).toEqual({ host: "127.0.0.1", port: 8081 });
    expect(loadSettings({ cwd, env: { CONVEYOR_SERVICE_LISTEN: "0.0.0.0:0" } }).serviceListen).toEqual({ host: "0.0.0.0", port: 0 });
    expect(() => loadSettings({ cwd, env: { CONVEYOR_SERVICE_LISTEN: "127.0.0.1:70000" } })).toThrow(/CONVEYOR_SERVICE_LISTEN.*0 to 65535/);
    expect(s.storage).toBe(path.join(cwd, ".conveyor", "storage"));
    expect(s.automations).toBe(path.join(cwd, "samples"));
    expect(s.concurrency).toBe(4);
    expect(s.bulkRows).toBe(5000);
    expect(s.fullRunEveryMs).toBe(24 * 3600_000);
    expect(s.maxRunTimeMs).toBe(2 * 3600_000);
    expect(s.debugRows).toBe(1000);
    expect(s.runRetentionMs).toBe(30 * 86_400_000);
    expect([s.readLimit, s.writeLimit]).toEqual([300, 60]);
    expect(s.allowPrivateHosts).toBe(false);
    expect(s.alertAfter).toBe(3);
  });

  it("applies defaults < config file < environment < flags", () => {
    const cwd = tmp();
    writeFileSync(path.join(cwd, "conveyor.config.json"), JSON.stringify({ bulk_rows: 100, concurrency: 2, write_limit: 10 }));
    const s = loadSettings({ cwd, env: { CONVEYOR_CONCURRENCY: "3", CONVEYOR_WRITE_LIMIT: "20" }, flags: { write_limit: "30" } });
    expect(s.bulkRows).toBe(100);
    expect(s.concurrency).toBe(3);
    expect(s.writeLimit).toBe(30);
  });

  it("reads every setting from its environment name", () => {
    for (const spec of SETTINGS) expect(spec.env).toMatch(/^CONVEYOR_[A-Z_]+$/);
    const s = loadSettings({
      cwd: tmp(),
      env: { CONVEYOR_SERVICE_URL: "https://api.example.com/", CONVEYOR_STORAGE: "s3://bucket/prefix", CONVEYOR_FULL_RUN_EVERY: "6h", CONVEYOR_ALLOW_PRIVATE_HOSTS: "1" },
    });
    expect(s.serviceUrl).toBe("https://api.example.com");
    expect(s.embedded).toBe(false);
    expect(s.automations).toBeUndefined();
    expect(s.storage).toBe("s3://bucket/prefix");
    expect(s.fullRunEveryMs).toBe(6 * 3600_000);
    expect(s.allowPrivateHosts).toBe(true);
  });

  it("names the setting, its environment name and the rule on bad values", () => {
    let caught: unknown;
    try {
      loadSettings({ cwd: tmp(), env: { CONVEYOR_CONCURRENCY: "many", CONVEYOR_FULL_RUN_EVERY: "daily" } });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConveyorError);
    const message = (caught as ConveyorError).message;
    expect(message).toContain("CONVEYOR_CONCURRENCY");
    expect(message).toContain("CONVEYOR_FULL_RUN_EVERY");
    expect(message).toContain("90s, 15m, 24h, 30d");
  });

  it("refuses unknown keys in the config file and lists the known ones", () => {
    const cwd = tmp();
    writeFileSync(path.join(cwd, "conveyor.config.json"), JSON.stringify({ bulkrows: 5 }));
    expect(() => loadSettings({ cwd, env: {} })).toThrow(/known settings: data_dir/);
  });

  it("renders a README table with every setting, and the README carries it", () => {
    const table = settingsTable();
    for (const spec of SETTINGS) expect(table).toContain(spec.env);
    const readme = readFileSync(path.join(import.meta.dirname, "../../README.md"), "utf8");
    expect(readme, "README settings table is stale: regenerate it from settingsTable()").toContain(table);
  });
});

describe("secret settings", () => {
  it("mask the password of a database or SMTP URL on its own, as a driver's error may quote it", () => {
    loadSettings({ cwd: tmp(), env: { CONVEYOR_DATABASE_URL: "postgres://conveyor:db-pw-6021@db.internal:5432/state", CONVEYOR_SMTP_URL: "smtp://mailer:smtp-pw-4410@mail.internal:587" } });
    expect(maskSecrets("auth failed for db-pw-6021 and smtp-pw-4410 at db.internal")).toBe(`auth failed for ${MASK} and ${MASK} at db.internal`);
  });
});
