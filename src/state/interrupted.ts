import type { RunRecord } from "./types.js";

/**
 * The error of a run found open after its worker died: what the record says
 * reached the service (the rows of every bulk file whose result was read,
 * and the files sent whose result was never read), so an operator knows
 * what the service holds without reading its logs.
 */
export function interruptedError(run: RunRecord): NonNullable<RunRecord["error"]> {
  const hint = "Run the automation again: it plans from the service's current values, so what already reached the service is neither created twice nor lost.";
  const applied = run.applied;
  const unconfirmed = run.unconfirmed_files ?? [];
  if (!applied || (applied.files === 0 && unconfirmed.length === 0)) {
    return { code: "interrupted", message: "interrupted: the worker stopped before the run finished, before it sent anything to the service; nothing was committed, the next run does the work again", hint };
  }
  const parts: string[] = [];
  if (applied.files > 0) {
    const rows = (["created", "updated", "removed", "failed"] as const).filter((k) => applied[k] > 0).map((k) => `${applied[k]} ${k}`);
    const planned = applied.planned_files ?? 0;
    const of = planned > applied.files ? ` of ${planned}` : "";
    parts.push(`the service confirmed ${rows.length ? rows.join(", ") : "no row"} in ${applied.files}${of} bulk ${plural(Math.max(planned, applied.files), "file")}`);
  } else parts.push("the service confirmed no bulk file");
  if (unconfirmed.length > 0) {
    const names = unconfirmed.map((f) => `${f.name}, ${f.rows} ${plural(f.rows, "row")}, ${f.job === null ? "job unknown" : `job ${f.job}`}`).join("; ");
    const was = unconfirmed.length === 1 ? "was" : "were";
    parts.push(`${unconfirmed.length} ${plural(unconfirmed.length, "file")} ${was} sent and ${unconfirmed.length === 1 ? "its" : "their"} result is unknown (${names}): the service may hold some, all or none of ${unconfirmed.length === 1 ? "its" : "their"} rows`);
  }
  return {
    code: "interrupted",
    message: `interrupted: the worker stopped before the run finished, after ${parts.join("; ")}. The snapshot and ledger of the unfinished pass were not committed: a re-run converges (it plans from the service's current values)`,
    hint,
  };
}

function plural(n: number, word: string): string {
  return n === 1 ? word : `${word}s`;
}
