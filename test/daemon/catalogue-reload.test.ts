import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { startTestDaemon, stockDefinition } from "./daemon-harness.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

function shared(sharedId: number, name: string): Record<string, unknown> {
  return { ...stockDefinition({ name }), shared_id: sharedId };
}

describe("the published catalogue is read again without a restart", () => {
  it("reloadCatalogue(): a new file is listed and installable; an installed automation whose file went away refuses to run, naming it", async () => {
    const t = await startTestDaemon({ published: { "a.json": shared(501, "First shared") } });
    try {
      const folder = path.join(t.dir, "automations", "published");
      const installed = await t.request("POST", "/v3/automations/installed", { shared_id: 501, active: false, parameters: [{ name: "warehouse", value: "east", encrypted: false }] });
      expect(installed.status).toBe(200);

      writeFileSync(path.join(folder, "b.json"), JSON.stringify(shared(502, "Second shared")));
      expect((await t.request("GET", "/v3/automations/published")).body.count).toBe("1");
      expect(await t.daemon.reloadCatalogue()).toBe(2);
      const listed = await t.request("GET", "/v3/automations/published");
      expect((listed.body.automations as Array<{ id: number }>).map((a) => a.id).sort()).toEqual([501, 502]);
      expect((await t.request("POST", "/v3/automations/installed", { shared_id: 502, active: false })).status).toBe(200);

      unlinkSync(path.join(folder, "a.json"));
      expect(await t.daemon.reloadCatalogue()).toBe(1);
      const run = await t.request("GET", `/v3/automations/installed/${String(installed.body.id)}/run`);
      expect(run.status).toBe(409);
      expect(run.text).toContain("no longer in the catalogue");
    } finally {
      await t.close();
    }
  });

  describe("`conveyor daemon` on SIGHUP", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "conveyor-sighup-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("logs catalogue_reloaded with the new count and serves the new entry; it keeps running", async () => {
      const folder = path.join(dir, "automations", "published");
      mkdirSync(folder, { recursive: true });
      writeFileSync(path.join(folder, "a.json"), JSON.stringify(shared(601, "First shared")));
      const env: Record<string, string> = { ...(process.env as Record<string, string>), CONVEYOR_DATA_DIR: path.join(dir, "data"), CONVEYOR_AUTOMATIONS: path.join(dir, "automations"), CONVEYOR_LISTEN: "127.0.0.1:0", CONVEYOR_SERVICE_LISTEN: "127.0.0.1:0" };
      for (const key of ["CONVEYOR_DATABASE_URL", "CONVEYOR_SERVICE_URL", "CONVEYOR_API_USER", "CONVEYOR_API_TOKEN"]) delete env[key];
      const proc = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "daemon", "--grace", "1"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
      const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
      const events: Array<Record<string, unknown>> = [];
      createInterface({ input: proc.stdout }).on("line", (line) => {
        try {
          events.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // Not a log line.
        }
      });
      try {
        const started = await new Promise<{ url: string; user: string; token: string }>((resolve, reject) => {
          let err = "";
          let url = "";
          let user = "";
          createInterface({ input: proc.stderr }).on("line", (line) => {
            err += `${line}\n`;
            url ||= /listening on (http:\/\/\S+)/.exec(line)?.[1] ?? "";
            user ||= /^API user:\s+(\S+)/.exec(line)?.[1] ?? "";
            const token = /^API token:\s+(\S+)/.exec(line)?.[1];
            if (token) resolve({ url, user, token });
          });
          void exited.then((code) => reject(new Error(`the daemon exited with ${code} before listening:\n${err}`)));
        });
        const published = async (): Promise<Record<string, unknown>> => {
          const res = await fetch(`${started.url}/v3/automations/published`, { headers: { "X-Auth-User": started.user, "X-Auth-Token": started.token } });
          return (await res.json()) as Record<string, unknown>;
        };
        expect((await published()).count).toBe("1");

        writeFileSync(path.join(folder, "b.json"), JSON.stringify(shared(602, "Second shared")));
        proc.kill("SIGHUP");
        const until = Date.now() + 10_000;
        while (!events.some((e) => e.event === "catalogue_reloaded") && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
        expect(events.find((e) => e.event === "catalogue_reloaded")).toMatchObject({ published: 2 });
        expect((await published()).count).toBe("2");
        expect(proc.exitCode).toBeNull();
      } finally {
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
        await exited;
        clearTimeout(timer);
      }
    }, 60_000);
  });
});
