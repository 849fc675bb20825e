import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// src/pipeline's folders as src/pipeline/README.md draws them: run.ts is the
// one file that reaches into a direction (import/, export/); the directions
// do not import each other, and output/ and the shared files import from
// neither, so the machinery below a direction never depends on one.

const PIPELINE = path.resolve(import.meta.dirname, "../../src/pipeline");

function modules(): string[] {
  return readdirSync(PIPELINE, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".ts"));
}

/** The folder (`import`, `export`, `output`) of a module path relative to src/pipeline, or "" for the shared files. */
function folder(relative: string): string {
  const parts = relative.split(path.sep);
  return parts.length > 1 ? (parts[0] ?? "") : "";
}

function pipelineImports(relative: string): string[] {
  const file = path.join(PIPELINE, relative);
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const match of text.matchAll(/(?:import|export)\s[^;]*?from\s+"(\.{1,2}\/[^"]+)"|import\("(\.{1,2}\/[^"]+)"\)/g)) {
    const target = path.relative(PIPELINE, path.resolve(path.dirname(file), (match[1] ?? match[2] ?? "").replace(/\.js$/, ".ts")));
    if (!target.startsWith("..")) found.push(target);
  }
  return found;
}

describe("src/pipeline's folders", () => {
  it("only run.ts imports a direction; directions do not import each other", () => {
    const wrong: string[] = [];
    for (const from of modules()) {
      for (const to of pipelineImports(from)) {
        const [a, b] = [folder(from), folder(to)];
        const direction = b === "import" || b === "export";
        if (direction && a !== b && from !== "run.ts") wrong.push(`${from} -> ${to}`);
      }
    }
    expect(modules().length).toBeGreaterThan(40);
    expect(wrong).toEqual([]);
  });
});
