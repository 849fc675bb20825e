import type { AutomationStatus, RunMode, RunRecord } from "./types.js";

/** The modes the status object has a half for. */
export const STATUS_MODES: readonly RunMode[] = ["debug", "prod"];

/**
 * The seed's status object, derived from run records (newest first). A reset
 * (`DELETE …/status?type=`) hides the runs of that mode started before it.
 */
export function deriveStatus(runsNewestFirst: readonly RunRecord[], resets: Partial<Record<RunMode, string>>): AutomationStatus {
  const visible = (mode: RunMode): RunRecord | undefined =>
    runsNewestFirst.find((r) => r.mode === mode && (resets[mode] === undefined || r.started > (resets[mode] ?? "")));
  const debug = visible("debug");
  const prod = visible("prod");
  const latest = [debug, prod].filter((r): r is RunRecord => r !== undefined).sort((a, b) => (a.started < b.started ? 1 : -1))[0];
  const success = (r: RunRecord | undefined): boolean | null =>
    r?.outcome == null ? null : r.outcome === "success" || r.outcome === "nothing";
  return {
    debug_files: debug?.debug_files ?? [],
    last_run_id: latest?.id ?? null,
    last_run_start_debug: debug?.started ?? null,
    last_run_finish_debug: debug?.finished ?? null,
    last_run_success_debug: success(debug),
    last_run_start_prod: prod?.started ?? null,
    last_run_finish_prod: prod?.finished ?? null,
    last_run_success_prod: success(prod),
  };
}
