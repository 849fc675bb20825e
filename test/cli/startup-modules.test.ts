import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { storageFeed } from "../helpers/storage-feed.js";

/**
 * Issue 28's start-up row: `conveyor --help` must not load what only a run,
 * the daemon or one connection type needs. A hook in the child process
 * records every module URL resolved; the heavy packages must not be among
 * them. A static import of one of them from a command's declaration, the
 * settings table or the connector specs puts it back, and fails here.
 */
const HEAVY = ["@aws-sdk", "exceljs", "fastify", "pg", "pg-boss", "imapflow", "nodemailer", "twig", "ssh2", "basic-ftp", "better-sqlite3", "undici", "zod", "pino"];

const dir = mkdtempSync(path.join(tmpdir(), "conveyor-startup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hook = path.join(dir, "record.mjs");
const out = path.join(dir, "resolved.txt");
writeFileSync(
  hook,
  [
    'import { registerHooks } from "node:module";',
    'import { writeFileSync } from "node:fs";',
    "const seen = new Set();",
    "registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });",
    `process.on("exit", () => writeFileSync(${JSON.stringify(out)}, [...seen].join("\\n")));`,
  ].join("\n"),
);

function packagesOf(urls: readonly string[]): Set<string> {
  const found = new Set<string>();
  for (const url of urls) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    if (m?.[1]) found.add(m[1]);
  }
  return found;
}

function run(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", "--import", hook, "src/cli.ts", ...args], { timeout: 60_000, env }, (err, stdout) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout }),
    );
  });
}

describe("conveyor --help at start-up", () => {
  it.each([[["--help"]], [["run", "--help"]], [["daemon", "--help"]]])("%j loads commander and none of the heavy packages", async (args) => {
    const result = await run(args);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Usage: conveyor");
    const packages = packagesOf(readFileSync(out, "utf8").split("\n"));
    // The hook sees the program's modules: without commander, it saw nothing and proves nothing.
    expect(packages).toContain("commander");
    const loaded = HEAVY.filter((name) => [...packages].some((p) => p === name || p.startsWith(`${name}/`)));
    expect(loaded).toEqual([]);
  }, 90_000);
});

/**
 * The same for a small ad hoc run: a debug run of a 12-row CSV feed in the
 * account's storage, on the embedded service, loads neither the libraries
 * of other connection types and formats nor the template engine nor
 * undici's index, and starts no thread to write its dozen plan lines.
 */
const RUN_UNUSED = ["@aws-sdk", "exceljs", "pg", "pg-boss", "imapflow", "nodemailer", "ssh2", "basic-ftp", "twig", "cli-progress", "@xmldom", "xpath", "jsonpath-plus", "saxes", "stream-json", "yauzl", "iconv-lite", "cli-table3"];

describe("a small debug run at start-up", () => {
  it("loads only what a CSV storage feed uses", async () => {
    const { data, definition } = storageFeed(dir, {
      slug: "startup-run",
      csv: `sku,stock\n${Array.from({ length: 12 }, (_, i) => `SKU-${i},${i}`).join("\n")}\n`,
      fileConfig: { identifier: "sku", update: "edit", field_map: { sku: "sku", stock: "stock" } },
    });
    const result = await run(["run", definition, "--debug", "--json"], { ...process.env, CONVEYOR_DATA_DIR: data, CONVEYOR_AUTOMATIONS: "" });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ outcome: "success", counts: { rows: 12 } });
    const urls = readFileSync(out, "utf8").split("\n");
    const packages = packagesOf(urls);
    expect(packages).toContain("zod");
    const loaded = RUN_UNUSED.filter((name) => [...packages].some((p) => p === name || p.startsWith(`${name}/`)));
    expect(loaded).toEqual([]);
    expect(urls.filter((u) => u.includes("op-writer-thread") || u.includes("connectors/http."))).toEqual([]);
    // The service transport takes undici's Agent and request alone (src/service/undici-lean.ts), not its index.
    expect(urls.some((u) => u.includes("undici/lib/dispatcher/agent.js"))).toBe(true);
    expect(urls.filter((u) => u.endsWith("node_modules/undici/index.js"))).toEqual([]);
  }, 90_000);
});
