/**
 * What the console's run page and plan viewer show, read from the state
 * store for one account: a run of another account is not found (null), the
 * same answer as for a run that does not exist. Pure of HTTP, so the pages'
 * data is tested without a server.
 *
 * @module
 */

import { text as streamText } from "node:stream/consumers";
import { z } from "zod";
import type { RunProgressSnapshot, RunRecord, StateStore } from "../state/index.js";
import { debugTablesOf } from "./plan/shared.js";
import type { PlanPage, TablePage } from "./plan/debug-tables.js";
import { planQuery } from "./plan/query.js";
import type { ErrorRow, PlanFilter } from "./plan/tables.js";

export interface RunDataDeps {
  store: StateStore;
  dataDir: string;
  /** The automation's name for the heading; null when it is gone. */
  automationName?: (key: string) => Promise<string | null>;
}

export interface StageTiming {
  stage: string;
  at: string;
  /** Until the next stage began; null for the last. */
  seconds: number | null;
}

export interface RunPageData {
  run: RunRecord;
  automationName: string | null;
  /** The ids of the events that started an event run (empty otherwise). */
  events: string[];
  timings: StageTiming[];
  /** The first page of errors.csv (or the one asked for); null when the run has none. */
  errors: TablePage<ErrorRow> | null;
  hasPlan: boolean;
}

export interface PlanPageData {
  run: RunRecord;
  filter: PlanFilter;
  /** null when the run has no plan.csv. */
  plan: PlanPage | null;
}

export interface LiveData {
  id: string;
  state: "running" | "finished";
  outcome: string | null;
  progress: RunProgressSnapshot | null;
  counts: RunRecord["counts"];
}

const RUN_ID = /^[A-Za-z0-9_-]{1,100}$/;

async function ownRun(store: StateStore, account: string, runId: string): Promise<RunRecord | null> {
  if (!RUN_ID.test(runId)) return null;
  const run = await store.getRun(runId);
  return run && run.account === account ? run : null;
}

/** `events` as an event run carries them: a list of ids, or `{ids: [...]}`; anything else is none. */
export function eventIds(run: RunRecord): string[] {
  const raw: unknown = (run as RunRecord & { events?: unknown }).events;
  const list: unknown = Array.isArray(raw) ? raw : raw !== null && typeof raw === "object" ? (raw as { ids?: unknown }).ids : undefined;
  return Array.isArray(list) ? list.filter((x): x is string => typeof x === "string") : [];
}

const summarySchema = z.object({ timings: z.array(z.object({ stage: z.string(), at: z.string() })).optional() });

/** Stage timings from the run's summary.json (every run writes one); empty while it runs or when it is unreadable. */
async function stageTimings(store: StateStore, run: RunRecord): Promise<StageTiming[]> {
  const file = run.debug_files.includes("summary.json") ? await store.getDebugFile(run.id, "summary.json").catch(() => null) : null;
  // summary.json is small; a damaged one is no reason to fail the page.
  if (!file || file.size > 4 * 2 ** 20) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(await streamText(file.open()));
  } catch {
    return [];
  }
  const summary = summarySchema.safeParse(parsed);
  const timings = summary.success ? (summary.data.timings ?? []) : [];
  return timings.map((t, i) => {
    const next = timings[i + 1];
    const seconds = next ? Math.max(0, (Date.parse(next.at) - Date.parse(t.at)) / 1000) : null;
    return { stage: t.stage, at: t.at, seconds: seconds === null || Number.isNaN(seconds) ? null : seconds };
  });
}

export async function runPageData(deps: RunDataDeps, account: string, runId: string, query: Record<string, string | undefined>): Promise<RunPageData | null> {
  const run = await ownRun(deps.store, account, runId);
  if (!run) return null;
  const errorsPage = planQuery({ page: query.errors_page }).page;
  const tables = debugTablesOf(deps.store, deps.dataDir);
  const errors = run.debug_files.includes("errors.csv") ? await tables.errors(run.id, errorsPage) : null;
  return {
    run,
    automationName: (await deps.automationName?.(run.automation)) ?? null,
    events: eventIds(run),
    timings: await stageTimings(deps.store, run),
    errors,
    hasPlan: run.debug_files.includes("plan.csv"),
  };
}

export async function planPageData(deps: RunDataDeps, account: string, runId: string, query: Record<string, string | undefined>): Promise<PlanPageData | null> {
  const run = await ownRun(deps.store, account, runId);
  if (!run) return null;
  const { page, filter } = planQuery(query);
  const plan = run.debug_files.includes("plan.csv") ? await debugTablesOf(deps.store, deps.dataDir).plan(run.id, filter, page) : null;
  return { run, filter, plan };
}

/** What the run page's script polls while the run runs. */
export async function liveData(deps: RunDataDeps, account: string, runId: string): Promise<LiveData | null> {
  const run = await ownRun(deps.store, account, runId);
  if (!run) return null;
  const running = run.finished === null;
  return { id: run.id, state: running ? "running" : "finished", outcome: run.outcome, progress: running ? (run.progress ?? null) : null, counts: run.counts };
}
