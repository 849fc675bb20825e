import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { FileConfig } from "../../../src/definition/index.js";
import { ConveyorError } from "../../../src/errors.js";
import type { ApplyResult } from "../../../src/pipeline/import/apply-products.js";
import { DebugFiles } from "../../../src/pipeline/debug-files.js";
import type { FetchedFile } from "../../../src/pipeline/import/fetch.js";
import { runPass, type PassInput, type PassPlan, type PassStrategy } from "../../../src/pipeline/import/pass-driver.js";
import { RunRecorder } from "../../../src/pipeline/recorder.js";
import { addCounts, emptyCounts, type RunCounts, type RunRecord, type StateStore } from "../../../src/state/index.js";

/**
 * The driver's share of a pass, with a strategy that only reports what it
 * is asked to do: counts recorded once, guards on the pass's own errors,
 * the ledger only for a pass that applied something, the strategy closed
 * however the pass ends, and the pass's tally on show while it plans.
 */
const dir = mkdtempSync(path.join(tmpdir(), "conveyor-driver-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FILE = { remote: { name: "feed.csv", path: "feed.csv", size: 1, modified: null }, localPath: path.join(dir, "feed.csv"), size: 1, digest: Promise.resolve({ sha256: "", searched: { secrets: 0, found: false } }) } satisfies FetchedFile;

function counts(partial: Partial<RunCounts>): RunCounts {
  return { ...emptyCounts(), ...partial };
}

function applied(failed: string[], error: ApplyResult["error"] = null): ApplyResult {
  return { succeeded: 0, failed: new Map(failed.map((id) => [id, "refused"])), error, writes: 1 };
}

/** A plan as the fake strategy hands it over: `counts` go into the driver's tally as the plan ends. */
type Planned = PassPlan & { counts?: RunCounts };

interface RunOptions {
  live?: boolean;
  apply?: ApplyResult;
  runCounts?: RunCounts;
  underWay?: (pass: Readonly<RunCounts> | null) => void;
}

interface Scene {
  steps: string[];
  ledger: Array<readonly FetchedFile[]>;
  run(plan: Planned | ((tally: RunCounts) => Promise<Planned>), options?: RunOptions): Promise<Awaited<ReturnType<typeof runPass>>>;
}

async function scene(): Promise<Scene> {
  const steps: string[] = [];
  const ledger: Array<readonly FetchedFile[]> = [];
  const debug = await DebugFiles.open(mkdtempSync(path.join(dir, "debug-")), 100, false);
  const store = { snapshotPruneBefore: async () => void steps.push("prune") } as unknown as StateStore;
  const config = { remove_limit: { kind: "share", value: 0.2 }, error_limit: { kind: "share", value: 0.1 } } as unknown as FileConfig;
  return {
    steps,
    ledger,
    async run(plan, { live = true, apply = applied([]), runCounts = emptyCounts(), underWay } = {}) {
      const input = { config, files: Promise.resolve([FILE]), debug, store, snapshotKey: "k#0", live, diff: false, force: false } as unknown as PassInput;
      const strategy: PassStrategy = {
        plan: async (tally) => {
          steps.push("plan");
          const planned = typeof plan === "function" ? await plan(tally) : plan;
          if (planned.counts) addCounts(tally, planned.counts);
          return planned;
        },
        apply: async () => {
          steps.push("apply");
          return apply;
        },
        commit: async () => void steps.push("commit"),
        close: async () => void steps.push("close"),
      };
      return runPass({ input, counts: runCounts, ...(underWay ? { underWay } : {}), open: async () => strategy, ledger: async (files) => void ledger.push(files) });
    },
  };
}

const FACTS = { rows: 10, removals: 0, scopeSize: 0, removeConfigured: false };

describe("the pass driver", () => {
  it("adds the pass's counts to the run's, applies, commits with a prune, then writes the ledger", async () => {
    const s = await scene();
    const runCounts = counts({ rows: 5, create: 5 });
    const pass = await s.run({ counts: counts({ rows: 10, create: 4, update: 6 }), facts: FACTS }, { runCounts, apply: applied(["A"]) });
    expect(pass.guard).toBeNull();
    expect(runCounts).toMatchObject({ rows: 15, create: 9, update: 6, failed: 1 });
    expect(s.steps).toEqual(["plan", "apply", "commit", "prune", "close"]);
    expect(s.ledger).toEqual([[FILE]]);
  });

  it("weighs error_limit by this pass's row errors, not the run's, and stops before apply when it trips", async () => {
    const s = await scene();
    const calm = await s.run({ counts: counts({ rows: 10, row_errors: 1, create: 9 }), facts: FACTS }, { runCounts: counts({ rows: 10, row_errors: 9 }) });
    expect(calm.guard).toBeNull();
    const tripped = await s.run({ counts: counts({ rows: 10, row_errors: 2, create: 8 }), facts: FACTS });
    expect(tripped.guard?.name).toBe("error_limit");
    expect(tripped.apply).toBeNull();
    expect(s.steps.slice(-2)).toEqual(["plan", "close"]);
    expect(s.ledger).toHaveLength(1);
  });

  it("a debug pass, or one with nothing planned, stops after the plan", async () => {
    const s = await scene();
    await s.run({ counts: counts({ rows: 10, create: 10 }), facts: FACTS }, { live: false });
    await s.run({ counts: counts({}), facts: null });
    expect(s.steps).toEqual(["plan", "close", "plan", "close"]);
    expect(s.ledger).toEqual([]);
  });

  it("leaves the ledger alone when apply stopped early or every record failed", async () => {
    const s = await scene();
    const stopped = await s.run({ counts: counts({ rows: 10, create: 10 }), facts: FACTS }, { apply: { ...applied([]), error: new ConveyorError("service_unavailable", "down") } });
    expect(stopped.apply?.error?.message).toBe("down");
    await s.run({ counts: counts({ rows: 2, create: 2 }), facts: { ...FACTS, rows: 2 } }, { apply: applied(["A", "B"]) });
    expect(s.ledger).toEqual([]);
  });

  it("closes the strategy when planning fails", async () => {
    const s = await scene();
    await expect(s.run(() => Promise.reject(new Error("bad header")))).rejects.toThrow("bad header");
    expect(s.steps).toEqual(["plan", "close"]);
  });

  it("shows the pass's tally while it plans, then hands it to the run's counts", async () => {
    const s = await scene();
    const runCounts = counts({ rows: 5, create: 5 });
    let shown: Readonly<RunCounts> | null = null;
    const seen: Array<number | null> = [];
    const look = (): void => void seen.push(shown === null ? null : shown.rows + shown.row_errors);
    await s.run(
      async (tally) => {
        look();
        tally.rows += 3;
        look();
        tally.rows += 4;
        tally.row_errors += 1;
        tally.create += 6;
        look();
        return { facts: { ...FACTS, rows: 7 } };
      },
      { runCounts, underWay: (pass) => (shown = pass) },
    );
    // The run's own counts are untouched while the pass plans: only the tally grows.
    expect(seen).toEqual([0, 3, 8]);
    expect(shown).toBeNull();
    expect(runCounts).toMatchObject({ rows: 12, row_errors: 1, create: 11 });
  });

  it("a pass that fails partway leaves what it counted in the run's counts", async () => {
    const s = await scene();
    const runCounts = counts({ rows: 5, create: 5 });
    const failing = async (tally: RunCounts): Promise<Planned> => {
      tally.rows += 4;
      tally.row_errors += 2;
      throw new ConveyorError("file_format", "feed.csv: the file ends inside a record");
    };
    await expect(s.run(failing, { runCounts })).rejects.toThrow("ends inside a record");
    expect(runCounts).toMatchObject({ rows: 9, row_errors: 2, create: 5 });
    expect(s.steps).toEqual(["plan", "close"]);
  });

  it("the heartbeat writes the run's counts with the tally of the pass under way", async () => {
    vi.useFakeTimers();
    try {
      const beats: Array<Partial<RunRecord>> = [];
      const store = { createRun: async () => undefined, updateRun: async (_id: string, patch: Partial<RunRecord>) => void beats.push(patch) } as unknown as StateStore;
      const recorder = await RunRecorder.start(store, { automation: "a", account: "acc", mode: "prod", trigger: "manual", diff: false, force: false, notify: false, email: null });
      recorder.counts.rows = 5;
      const tally = counts({ rows: 2, row_errors: 1 });
      recorder.passUnderWay(tally);
      tally.rows += 1;
      await vi.advanceTimersByTimeAsync(10_000);
      expect(beats.at(-1)?.counts).toMatchObject({ rows: 8, row_errors: 1 });
      expect(recorder.counts).toMatchObject({ rows: 5, row_errors: 0 });
      recorder.passUnderWay(null);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(beats.at(-1)?.counts).toMatchObject({ rows: 5, row_errors: 0 });
      await recorder.finish("failed");
    } finally {
      vi.useRealTimers();
    }
  });
});
