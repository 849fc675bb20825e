import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(path.join(tmpdir(), "conveyor-banner-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts `conveyor daemon`, returns what it printed on stderr up to "Embedded service", then stops it. */
async function banner(extra: Record<string, string>): Promise<string> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), CONVEYOR_DATA_DIR: path.join(dir, "data"), CONVEYOR_AUTOMATIONS: "", CONVEYOR_LISTEN: "127.0.0.1:0", CONVEYOR_SERVICE_LISTEN: "127.0.0.1:0", ...extra };
  for (const key of ["CONVEYOR_DATABASE_URL", "CONVEYOR_SERVICE_URL"]) delete env[key];
  const proc = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "daemon", "--grace", "1"], { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise<void>((resolve) => proc.on("exit", () => resolve()));
  try {
    return await new Promise<string>((resolve, reject) => {
      let err = "";
      createInterface({ input: proc.stderr }).on("line", (line) => {
        err += `${line}\n`;
        if (line.startsWith("Embedded service on")) resolve(err);
      });
      void exited.then(() => reject(new Error(`the daemon exited before its banner:\n${err}`)));
    });
  } finally {
    proc.kill("SIGTERM");
    await exited;
  }
}

describe("`conveyor daemon` start-up banner", () => {
  it("shows a token it made, and never one the settings gave it", async () => {
    const given = await banner({ CONVEYOR_API_USER: "merchant", CONVEYOR_API_TOKEN: "PRODUCTION-TOKEN-abcdef123" });
    expect(given).toContain("API user:  merchant");
    expect(given).toContain("API token: (the one in CONVEYOR_API_TOKEN)");
    expect(given).not.toContain("PRODUCTION-TOKEN-abcdef123");
    const made = await banner({ CONVEYOR_API_USER: "", CONVEYOR_API_TOKEN: "" });
    expect(made).toMatch(/^API token: [0-9a-f]{32,}$/m);
  }, 60_000);
});
