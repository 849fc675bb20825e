import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BANNER, bundleProgram } from "../../scripts/bundle.js";
import { THREAD_FROM_OPS } from "../../src/pipeline/output/op-writer.js";
import { storageFeed } from "../helpers/storage-feed.js";

/**
 * The built program as `npm run build` leaves it: tsc's output bundled by
 * scripts/bundle.ts, which dist/src/cli.js loads. The suite runs the sources,
 * so this is where the bundle itself is checked: that each module still finds
 * the files it names beside itself (threads, the template process, the
 * console's assets), that `--help` stays light, and that a debug run, a live
 * run (its bulk files uploaded to the embedded service) and the daemon work
 * through it.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const WORK = path.join(ROOT, "test-output", `bundle-${process.pid}`);
const DIST = path.join(WORK, "dist");
const BUNDLE = path.join(DIST, "bundle");
const CLI = path.join(DIST, "src", "cli.js");

function exec(file: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: WORK, env, timeout: 120_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  // The console's assets are read from the source tree beside dist, as in a checkout.
  symlinkSync(path.join(ROOT, "src"), path.join(WORK, "src"));
  const tsc = await exec(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", path.join(ROOT, "tsconfig.build.json"), "--outDir", DIST]);
  expect(tsc.code, tsc.stdout + tsc.stderr).toBe(0);
  await bundleProgram(DIST);
}, 240_000);

afterAll(() => rmSync(WORK, { recursive: true, force: true }));

const chunks = (): string[] => readdirSync(BUNDLE).filter((name) => name.endsWith(".js"));

describe("the bundle", () => {
  it("names each module's own compiled file wherever a module asks where it is", () => {
    const places = new Set<string>();
    for (const chunk of chunks()) {
      const text = readFileSync(path.join(BUNDLE, chunk), "utf8");
      const bare = text.replace(BANNER, "").replace(/new URL\("([^"]+)", import\.meta\.url\)\.href/g, (_, own: string) => {
        places.add(own);
        return "";
      });
      expect(bare, chunk).not.toContain("import.meta.url");
    }
    // The modules that start threads and the template process, and the console's assets, are among them.
    for (const own of ["../src/pipeline/output/op-writer.js", "../src/pipeline/export/threaded-render.js", "../src/template/renderer.js", "../src/console/assets.js"]) {
      expect(places).toContain(own);
    }
    for (const own of places) expect(existsSync(fileURLToPath(new URL(own, `file://${BUNDLE}/`))), own).toBe(true);
  });

  it("keeps `--help` off zod and the heavy packages", async () => {
    const hook = path.join(WORK, "record.mjs");
    const seen = path.join(WORK, "resolved.txt");
    writeFileSync(
      hook,
      `import { registerHooks } from "node:module"; import { writeFileSync } from "node:fs"; const seen = new Set();
registerHooks({ resolve(s, c, next) { const r = next(s, c); seen.add(r.url); return r; } });
process.on("exit", () => writeFileSync(${JSON.stringify(seen)}, [...seen].join("\\n")));`,
    );
    const result = await exec(process.execPath, ["--import", hook, CLI, "--help"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("Usage: conveyor");
    const urls = readFileSync(seen, "utf8").split("\n");
    const loaded = urls.filter((url) => url.startsWith(`file://${BUNDLE}/`));
    expect(loaded.length).toBeGreaterThan(0);
    // zod and Fastify are bundled: no chunk holding them may load.
    for (const url of loaded) {
      const text = readFileSync(fileURLToPath(url), "utf8");
      expect(text, url).not.toContain('"$ZodType"');
      expect(text, url).not.toContain("FST_ERR_CTP_INVALID_MEDIA_TYPE");
    }
    expect(urls.filter((url) => /node_modules\/(fastify|undici|better-sqlite3|pg|@aws-sdk|exceljs)\//.test(url))).toEqual([]);
  });

  it("runs a debug import whose bulk files are written by a thread, then the live run", async () => {
    const ROWS = THREAD_FROM_OPS + 5000;
    // Past THREAD_FROM_OPS planned writes, the bulk files are written by a thread.
    const { data, definition } = storageFeed(WORK, {
      slug: "bundle-run",
      csv: `sku,title,stock\n${Array.from({ length: ROWS }, (_, i) => `BUNDLE-${i},Bundled ${i},${i}`).join("\n")}\n`,
      fileConfig: { identifier: "sku", create: "add", field_map: { sku: "sku", title: "title", stock: "stock" } },
    });
    const env = { ...process.env, CONVEYOR_DATA_DIR: data, CONVEYOR_AUTOMATIONS: "", CONVEYOR_WRITE_LIMIT: "100000", CONVEYOR_READ_LIMIT: "100000" };
    const debug = await exec(process.execPath, [CLI, "run", definition, "--debug", "--json"], env);
    expect(debug.code, debug.stderr).toBe(0);
    expect(JSON.parse(debug.stdout)).toMatchObject({ outcome: "success", counts: { rows: ROWS, create: ROWS } });
    // Live: the bulk files go to the embedded service as multipart uploads, through the bundled Fastify.
    const live = await exec(process.execPath, [CLI, "run", definition, "--json"], env);
    expect(live.code, live.stderr).toBe(0);
    expect(JSON.parse(live.stdout)).toMatchObject({ outcome: "success", counts: { rows: ROWS, create: ROWS, failed: 0 } });
    const again = await exec(process.execPath, [CLI, "run", definition, "--debug", "--json"], env);
    expect(JSON.parse(again.stdout)).toMatchObject({ outcome: "success", counts: { rows: ROWS, create: 0 } });
  });

  it("starts the daemon with its console", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, CONVEYOR_DATA_DIR: path.join(WORK, "daemon-data"), CONVEYOR_AUTOMATIONS: "", CONVEYOR_LISTEN: "127.0.0.1:0", CONVEYOR_SERVICE_LISTEN: "127.0.0.1:0" };
    for (const key of ["CONVEYOR_DATABASE_URL", "CONVEYOR_SERVICE_URL", "CONVEYOR_API_USER", "CONVEYOR_API_TOKEN"]) delete env[key];
    const proc = spawn(process.execPath, [CLI, "daemon", "--grace", "1"], { cwd: WORK, env, stdio: ["ignore", "ignore", "pipe"] });
    const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let err = "";
        createInterface({ input: proc.stderr }).on("line", (line) => {
          err += `${line}\n`;
          const m = /^Conveyor daemon listening on (\S+)/.exec(line);
          if (m?.[1]) resolve(m[1]);
        });
        void exited.then(() => reject(new Error(`the daemon exited before its banner:\n${err}`)));
      });
      const css = await fetch(`${url}/assets/console.css`);
      expect(css.status).toBe(200);
      expect(await css.text()).toBe(readFileSync(path.join(ROOT, "src/console/assets/console.css"), "utf8"));
      // The API refuses a request without credentials in its JSON error shape.
      const refused = await fetch(`${url}/v3/automations`);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ result: "error" });
    } finally {
      proc.kill("SIGTERM");
      await exited;
    }
  });
});
