/**
 * What `conveyor --version` prints: the program's version from its
 * package.json and the runtime that runs it, since "which Node is this on"
 * is the first question when a native add-on or a TLS setting misbehaves.
 */

import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describeRuntime } from "./runtime.js";

/** The version in Conveyor's package.json, found upwards from this file (src/ or dist/src/). */
export function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
      if (manifest.name === "conveyor" && typeof manifest.version === "string") return manifest.version;
    } catch {
      // No package.json here: look one folder up.
    }
    const parent = path.dirname(dir);
    if (parent === dir) return "unknown";
    dir = parent;
  }
}

export function versionText(): string {
  return `conveyor ${packageVersion()} on ${describeRuntime()}`;
}
