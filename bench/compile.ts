import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * A benchmark's measured phases run compiled JavaScript in plain `node`
 * processes, as `conveyor run` does: under tsx every process carries its
 * loader thread and compiler, 35 to 100 MB of RSS that is not ours.
 */
const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const BUILD_DIR = path.join(BENCH_DIR, "out", "build");

/** The entry modules of worker threads (`*-thread.ts`) and child processes (`*-process.ts`): nothing imports them, they are loaded by name. */
async function threadEntries(root: string): Promise<string[]> {
  const names = await readdir(path.join(root, "src"), { recursive: true });
  return names.filter((n) => n.endsWith("-thread.ts") || n.endsWith("-process.ts")).map((n) => path.join(root, "src", n));
}

/** Compiles `bench/<name>.ts`, what it imports and the thread entries; returns the compiled script. tsc emits despite type errors elsewhere. */
export async function compileBench(name: string): Promise<string> {
  const root = path.dirname(BENCH_DIR);
  const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
  const args = [tsc, path.join(BENCH_DIR, `${name}.ts`), ...(await threadEntries(root)), "--outDir", BUILD_DIR, "--rootDir", root, "--module", "NodeNext", "--moduleResolution", "NodeNext", "--target", "ES2022", "--lib", "ES2023", "--types", "node", "--esModuleInterop", "--resolveJsonModule", "--skipLibCheck", "--strict"];
  const proc = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "inherit"] });
  await once(proc, "exit");
  const built = path.join(BUILD_DIR, "bench", `${name}.js`);
  await stat(built);
  return built;
}

/** The compiled copy would otherwise be linted and type-checked as part of the repo. */
export async function removeBenchBuild(): Promise<void> {
  await rm(BUILD_DIR, { recursive: true, force: true });
}
