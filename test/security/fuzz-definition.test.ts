import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkFiles } from "../../src/commands/check-action.js";
import { loadAutomationFile, parseAutomation } from "../../src/definition/index.js";
import { isConveyorError } from "../../src/errors.js";
import { deep, definition, definitionLike, FuzzTally, junk, nestText, oddString, type Json } from "./fuzz-inputs.js";

/**
 * Issue #24: the definition parser and loader take any input a user can write
 * and answer with an automation or with problems that each name a field path;
 * they never throw anything else. The runs are bounded by count and by time so
 * the file stays well under a minute on a busy machine.
 */

const tallies: FuzzTally[] = [];
function tally(name: string): FuzzTally {
  const t = new FuzzTally(name);
  tallies.push(t);
  return t;
}

afterAll(() => {
  for (const t of tallies) console.log(t.report());
  const total = tallies.reduce((n, t) => n + t.inputs, 0);
  console.log(`fuzz definition: ${total} generated inputs in all, ${tallies.reduce((n, t) => n + t.failures.length, 0)} failures`);
});

/** JSON as it arrives from a file or a body: `__proto__` is an own key, numbers past the double range are gone. */
function wire(value: Json): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The parser's contract: an automation, or problems that each say where and what. */
function checkParse(raw: unknown, t: FuzzTally): boolean {
  t.inputs++;
  let result: ReturnType<typeof parseAutomation>;
  try {
    result = parseAutomation(raw);
  } catch (err) {
    t.fail(`threw ${(err as Error).message}`, raw);
    return false;
  }
  if (result.ok) return typeof result.automation.name === "string" && result.automation.file_configs.length > 0;
  expect(result.problems.length).toBeGreaterThan(0);
  for (const p of result.problems) {
    expect(typeof p.message).toBe("string");
    expect(p.message.length).toBeGreaterThan(0);
    // A definition that is an object has every problem at a field; only a non-object is refused as a whole.
    if (isObject(raw)) expect(p.path, `problem without a field path: ${p.message}`).not.toBe("");
  }
  return true;
}

describe("fuzz: parseAutomation", () => {
  it("answers any JSON value with an automation or with located problems, never a throw", () => {
    const t = tally("parseAutomation (mutated samples and arbitrary JSON)");
    fc.assert(
      fc.property(definitionLike, (value) => checkParse(wire(value), t)),
      { numRuns: 4_000, interruptAfterTimeLimit: 15_000 },
    );
    expect(t.inputs).toBeGreaterThan(500);
  });

  it("keeps some mutated samples valid, so the fuzz reaches normalization too", () => {
    let valid = 0;
    const t = tally("parseAutomation (valid share)");
    fc.assert(
      fc.property(definition, (value) => {
        t.inputs++;
        try {
          if (parseAutomation(wire(value)).ok) valid++;
        } catch {
          // The property above reports throws; this one only measures how many inputs are valid.
        }
        return true;
      }),
      { numRuns: 300, interruptAfterTimeLimit: 5_000 },
    );
    expect(valid).toBeGreaterThan(0);
  });
});

describe("fuzz: definition files (`conveyor check`)", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "conveyor-fuzz-def-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** File text a user might save: a definition, a broken one, or not JSON at all. */
  const fileText = fc.oneof(
    { weight: 4, arbitrary: definitionLike.map((v) => JSON.stringify(v, null, 2)) },
    { weight: 1, arbitrary: fc.tuple(definition.map((v) => JSON.stringify(v)), fc.nat()).map(([s, n]) => s.slice(0, n % (s.length + 1))) },
    { weight: 1, arbitrary: oddString },
    { weight: 1, arbitrary: junk(4).map((v) => `\uFEFF${JSON.stringify(v)},`) },
  );

  it("loadAutomationFile throws only ConveyorError, each problem with a path string", async () => {
    const t = tally("loadAutomationFile");
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fileText, async (text) => {
        t.inputs++;
        const file = path.join(dir, `load-${n++}.json`);
        writeFileSync(file, text);
        try {
          await loadAutomationFile(file);
        } catch (err) {
          if (!isConveyorError(err)) {
            t.fail(`threw ${(err as Error).name}: ${(err as Error).message}`, text);
            return false;
          }
          const problems = err.details.problems;
          expect(Array.isArray(problems)).toBe(true);
          for (const p of problems as Array<{ path: unknown; message: unknown }>) {
            expect(typeof p.path).toBe("string");
            expect(typeof p.message).toBe("string");
          }
        }
        return true;
      }),
      { numRuns: 600, interruptAfterTimeLimit: 8_000 },
    );
  });

  it("checks a batch to the end and reports each file, also a file nested thousands deep", async () => {
    const t = tally("conveyor check batches (with a deep file)");
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fileText, { minLength: 1, maxLength: 4 }), deep, fc.nat(), async (texts, d, at) => {
        // A deep value in an otherwise plain definition: the case that aborted the whole batch (issue #24).
        const all = [...texts];
        all.splice(at % (all.length + 1), 0, `{"name": "deep", "active": true, "metadata": ${nestText(d)}}`);
        const files = all.map((text) => {
          const file = path.join(dir, `batch-${n++}.json`);
          writeFileSync(file, text);
          return file;
        });
        t.inputs += files.length;
        let checks: Awaited<ReturnType<typeof checkFiles>>;
        try {
          checks = await checkFiles(files);
        } catch (err) {
          t.fail(`the batch aborted: ${(err as Error).message}`, `${files.length} files, one nested deep`);
          return false;
        }
        expect(checks.map((c) => c.file)).toEqual(files);
        for (const c of checks) if (!c.ok) expect(c.problems.length).toBeGreaterThan(0);
        return true;
      }),
      { numRuns: 40, interruptAfterTimeLimit: 10_000 },
    );
  });
});
