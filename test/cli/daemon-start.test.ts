import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { claimPidFile, pidFilePath } from "../../src/daemon/pid-file.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(path.join(tmpdir(), "conveyor-start-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function env(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env, CONVEYOR_DATA_DIR: dataDir, CONVEYOR_AUTOMATIONS: "", CONVEYOR_LISTEN: "127.0.0.1:0", CONVEYOR_SERVICE_LISTEN: "127.0.0.1:0", ...extra };
  for (const key of ["CONVEYOR_DATABASE_URL", "CONVEYOR_SERVICE_URL", "CONVEYOR_API_USER", "CONVEYOR_API_TOKEN"]) delete out[key];
  return out;
}

/** A command to its end: exit code and both streams. */
function conveyor(args: string[], processEnv: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], { cwd: ROOT, env: processEnv, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    proc.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    proc.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A running daemon, its JSON log lines collected as they come. */
async function daemon(processEnv: NodeJS.ProcessEnv): Promise<{ proc: ChildProcess; log: string[]; stop(): Promise<void> }> {
  const proc = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "daemon", "--grace", "1"], { cwd: ROOT, env: processEnv, stdio: ["ignore", "pipe", "pipe"] });
  const log: string[] = [];
  if (proc.stdout) createInterface({ input: proc.stdout }).on("line", (line) => log.push(line));
  const exited = new Promise<void>((resolve) => proc.on("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let err = "";
    if (proc.stderr) createInterface({ input: proc.stderr }).on("line", (line) => {
      err += `${line}\n`;
      if (line.startsWith("Embedded service on")) resolve();
    });
    void exited.then(() => reject(new Error(`the daemon exited before its banner:\n${err}`)));
  });
  return {
    proc,
    log,
    async stop() {
      proc.kill("SIGTERM");
      await exited;
    },
  };
}

async function occupy(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port: 0 }, resolve));
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("no port");
  return { server, port: address.port };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("`conveyor daemon` start-up", () => {
  it("refuses a port in use before anything is written, naming the setting to change (exit 2)", async () => {
    const { server, port } = await occupy();
    try {
      for (const [setting, what] of [["CONVEYOR_LISTEN", "the daemon API"], ["CONVEYOR_SERVICE_LISTEN", "the embedded service"]] as const) {
        const dataDir = path.join(dir, `taken-${setting}`);
        const result = await conveyor(["daemon"], env(dataDir, { [setting]: `127.0.0.1:${port}` }));
        expect(result.code).toBe(2);
        expect(result.stderr).toContain(`${what} cannot listen on 127.0.0.1:${port}: the port is in use by another process`);
        expect(result.stderr).toContain(`set ${setting} / --${setting === "CONVEYOR_LISTEN" ? "listen" : "service-listen"} to a free address`);
        expect(result.stderr).not.toContain("EADDRINUSE\n");
        expect(existsSync(dataDir), "the data folder must not be made").toBe(false);
      }
    } finally {
      server.close();
    }
  }, 60_000);

  it("keeps its pid in the data folder: a stale file replaced, a second daemon refused, `conveyor reload` reaching this one, the file gone at stop", async () => {
    const dataDir = path.join(dir, "pid");
    mkdirSync(dataDir, { recursive: true });
    // The pid of a process that has exited, as a kill -9'd daemon leaves behind.
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout;
    writeFileSync(pidFilePath(dataDir), `${gone}\n`);

    const first = await daemon(env(dataDir));
    try {
      expect(readFileSync(pidFilePath(dataDir), "utf8").trim()).toBe(String(first.proc.pid));

      const second = await conveyor(["daemon"], env(dataDir));
      expect(second.code).toBe(2);
      expect(second.stderr).toContain(`a daemon (pid ${String(first.proc.pid)}) already runs on the data folder ${dataDir}`);
      expect(readFileSync(pidFilePath(dataDir), "utf8").trim()).toBe(String(first.proc.pid));

      const reload = await conveyor(["reload", "--json"], env(dataDir));
      expect(reload.code, reload.stderr).toBe(0);
      expect(JSON.parse(reload.stdout)).toMatchObject({ pid: first.proc.pid, signal: "SIGHUP" });
      await until(() => first.log.some((line) => line.includes('"catalogue_reloaded"')), "catalogue_reloaded");

      const nobody = await conveyor(["reload"], env(path.join(dir, "no-daemon")));
      expect(nobody.code).toBe(1);
      expect(nobody.stderr).toContain("no daemon runs on the data folder");
    } finally {
      await first.stop();
    }
    expect(existsSync(pidFilePath(dataDir))).toBe(false);
  }, 90_000);

  it("replaces a pid file whose pid now belongs to a process that is not a daemon", () => {
    const dataDir = path.join(dir, "reused");
    mkdirSync(dataDir, { recursive: true });
    // This test's own process: alive, but its command line is vitest's, not `daemon`.
    writeFileSync(pidFilePath(dataDir), `${process.pid}\n`);
    const claimed = claimPidFile(dataDir, process.pid + 100_000);
    expect(readFileSync(claimed.file, "utf8").trim()).toBe(String(process.pid + 100_000));
    claimed.release();
    expect(existsSync(claimed.file)).toBe(false);
  });
});

describe("a CLI run while something holds CONVEYOR_SERVICE_LISTEN", () => {
  it("runs: its in-process service takes a free port of its own", async () => {
    const { server, port } = await occupy();
    try {
      const dataDir = path.join(dir, "cli-run");
      // The sample's storage folder, empty: the run ends `nothing`, exit 0.
      mkdirSync(path.join(dataDir, "storage", "demo", "feeds", "mainframe"), { recursive: true });
      const result = await conveyor(["run", "samples/fixed-width-storage.json", "--debug", "--json"], env(dataDir, { CONVEYOR_SERVICE_LISTEN: `127.0.0.1:${port}` }));
      expect(result.stderr).not.toContain("cannot listen");
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout.trim().split("\n").pop() ?? "{}")).toMatchObject({ mode: "debug", outcome: "nothing" });
    } finally {
      server.close();
    }
  }, 60_000);
});
