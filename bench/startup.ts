/**
 * `npm run bench:startup`: how long a user waits for the CLI (issue 28).
 * Runs `node -e 0`, `conveyor --help` and a debug run of a 12-row storage
 * feed (aged an hour, so no run waits on min_age) on the embedded default,
 * each 10 times, and prints the median and p90 wall time against the
 * targets; exits 1 on a miss. It measures the built
 * program (dist/src/cli.js) and builds nothing itself: run `npm run build`
 * first. Each run is a fresh process, as a user's is.
 */

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
const CLI = path.join(ROOT, "dist/src/cli.js");
const TIMES = Number(process.argv[2] ?? 10);

interface Case {
  name: string;
  args: string[];
  /** Seconds, median; undefined: the reference, no target. */
  target?: number;
}

function measure(args: string[], cwd: string, env: NodeJS.ProcessEnv): number[] {
  const walls: number[] = [];
  for (let i = 0; i < TIMES; i++) {
    const start = process.hrtime.bigint();
    const result = spawnSync(process.execPath, args, { cwd, env, encoding: "utf8" });
    walls.push(Number(process.hrtime.bigint() - start) / 1e9);
    if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${String(result.status)}: ${result.stderr}`);
  }
  return walls.sort((a, b) => a - b);
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
}

/** A 12-row stock feed in the account's storage of a fresh data folder, and a definition that imports it. */
function storageFeed(dir: string): string {
  const feeds = path.join(dir, "data", "storage", "demo", "feeds", "bench");
  mkdirSync(feeds, { recursive: true });
  const rows = Array.from({ length: 12 }, (_, i) => `SKU-${i + 1},${i * 3},${(i + 1.5).toFixed(2)}`);
  const feed = path.join(feeds, "stock.csv");
  writeFileSync(feed, `sku,stock,cost\n${rows.join("\n")}\n`);
  // Aged past min_age (30 s by default): a file written just now may still be uploading, and a
  // run waits for it to prove stable (automations.md). That wait is right for a fresh upload but
  // is not start-up, which is what this bench measures.
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(feed, hourAgo, hourAgo);
  const definition = path.join(dir, "startup-bench.json");
  writeFileSync(
    definition,
    JSON.stringify({
      name: "Startup bench",
      slug: "startup-bench",
      active: true,
      schedule: "0 * * * *",
      type: "products",
      action: "import",
      connection: { type: "sdsftp", path: "feeds/bench" },
      file_configs: [{ name: "stock.csv", identifier: "sku", update: "edit", field_map: { sku: "sku", stock: "stock", cost: "cost" } }],
    }),
  );
  return definition;
}

if (!existsSync(CLI)) {
  console.error(`${path.relative(ROOT, CLI)} is missing: run \`npm run build\` first (this bench measures the built program and builds nothing)`);
  process.exit(2);
}

const dir = mkdtempSync(path.join(tmpdir(), "conveyor-startup-"));
try {
  const definition = storageFeed(dir);
  const env = { ...process.env, CONVEYOR_DATA_DIR: path.join(dir, "data"), CONVEYOR_AUTOMATIONS: "" };
  const cases: Case[] = [
    { name: "node -e 0", args: ["-e", "0"] },
    { name: "conveyor --help", args: [CLI, "--help"], target: 0.15 },
    { name: "debug run, 12-row storage feed", args: [CLI, "run", definition, "--debug", "--json"], target: 0.4 },
  ];
  let missed = false;
  console.log(`${TIMES} runs each, wall seconds (Node ${process.version})`);
  for (const c of cases) {
    const walls = measure(c.args, dir, env);
    const median = quantile(walls, 0.5);
    const verdict = c.target === undefined ? "reference" : `target median <= ${c.target.toFixed(2)}: ${median <= c.target ? "ok" : "MISSED"}`;
    if (c.target !== undefined && median > c.target) missed = true;
    console.log(`${c.name.padEnd(32)} median ${median.toFixed(3)}  p90 ${quantile(walls, 0.9).toFixed(3)}  (${verdict})`);
  }
  if (missed) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
