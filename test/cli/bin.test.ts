import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MALLOC_ENV } from "../../src/memory.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * README says `npx conveyor …` in the project's folder after `npm run build`:
 * npm runs the `bin` of the project's own package.json. Running npx here
 * would need a build inside the test; what can break without one is checked
 * instead: the bin names the file the build writes for src/cli.ts, and that
 * file starts as an executable script.
 */
describe("`npx conveyor` after a build", () => {
  it("the package's bin is the build's output of src/cli.ts, with a node shebang that sets the allocator's environment", () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { bin?: Record<string, string>; scripts?: Record<string, string> };
    const tsconfig = JSON.parse(readFileSync(path.join(ROOT, "tsconfig.json"), "utf8")) as { compilerOptions?: { outDir?: string; rootDir?: string } };
    const outDir = tsconfig.compilerOptions?.outDir ?? "";
    const rootDir = tsconfig.compilerOptions?.rootDir ?? ".";
    const built = path.join(outDir, path.relative(path.resolve(ROOT, rootDir), path.join(ROOT, "src", "cli.js")));
    expect(pkg.bin?.conveyor).toBe(built);
    expect(pkg.scripts?.build).toBeDefined();
    // The allocator's settings are read as the process starts: the shebang line is where the command can set them.
    const env = Object.entries(MALLOC_ENV).map(([name, value]) => `${name}=${value}`);
    expect(readFileSync(path.join(ROOT, "src", "cli.ts"), "utf8").startsWith(`#!/usr/bin/env -S ${env.join(" ")} node\n`)).toBe(true);
    expect(pkg.scripts?.start).toBe(`${env.join(" ")} node ${built} daemon`);
  });
});
