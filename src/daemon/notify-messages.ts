import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { failureLines } from "../pipeline/failure-tally.js";
import { runFolder } from "../pipeline/run.js";
import { count } from "../plural.js";
import { maskSecrets } from "../secrets.js";
import type { RunRecord } from "../state/index.js";

/** errors.csv (row errors, and the records the service refused) is attached when at most this big; larger ones stay in the run's debug files. */
export const ATTACH_LIMIT = 512 * 1024;
const FIRST_ERRORS = 10;

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  attachments?: Array<{ filename: string; path: string }>;
}

function duration(run: RunRecord): string {
  if (!run.finished) return "still running";
  const ms = Date.parse(run.finished) - Date.parse(run.started);
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** The first lines of errors.csv, read as a stream so a huge file costs nothing. */
async function firstErrors(file: string): Promise<string[]> {
  const lines: string[] = [];
  const input = createReadStream(file, { encoding: "utf8" });
  const reader = createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const line of reader) {
      if (lines.length > FIRST_ERRORS) break;
      lines.push(line);
    }
  } finally {
    reader.close();
    input.destroy();
  }
  return lines.slice(1);
}

/** The completion summary of `notify=true` (runs.md): outcome, counts, duration, first errors, errors.csv when small. */
export async function summaryMessage(run: RunRecord, name: string, to: string, dataDir: string): Promise<MailMessage> {
  const errorsFile = path.join(runFolder(dataDir, run.id), "debug", "errors.csv");
  const size = await stat(errorsFile).then((s) => s.size, () => -1);
  const errors = size > 0 ? await firstErrors(errorsFile) : [];
  const c = run.counts;
  const lines = [
    `Automation: ${name} (${run.automation})`,
    `Run: ${run.id} (${run.mode === "debug" ? "debug run, nothing was written" : "live run"}, ${run.trigger})`,
    ...(run.undo_of ? [`Undo of run ${run.undo_of}: ${count(run.conflicts ?? 0, "field")} left alone as a conflict (conflicts.csv among the debug files)`] : []),
    `Outcome: ${run.outcome ?? "running"}`,
    `Duration: ${duration(run)}`,
    "",
    `Rows read: ${c.rows}, row errors: ${c.row_errors}${c.merged ? `, merged into earlier rows: ${c.merged}` : ""}`,
    `Create: ${c.create}, update: ${c.update}, unchanged: ${c.unchanged}, remove: ${c.remove}, skipped: ${c.skipped}, failed: ${c.failed}`,
    `Files: ${run.files.map((f) => `${f.name} (${count(f.size, "byte")})`).join(", ") || "none"}`,
    `Requests: ${count(run.requests.read, "read")}, ${count(run.requests.write, "write")}`,
  ];
  if (run.note) lines.push("", `Nothing to do: ${run.note}`);
  if (run.guard) lines.push("", `Stopped by the ${run.guard.name} guard: ${run.guard.message}`);
  if (run.error) lines.push("", `Error (${run.error.code}): ${run.error.message}`, ...(run.error.hint ? [`How to fix: ${run.error.hint}`] : []));
  const failures = failureLines(run.failures ?? [], run.error);
  if (failures.length) lines.push("", ...failures);
  if (errors.length > 0) lines.push("", "First lines of errors.csv (line, identifier, message):", ...errors.map((l) => `  ${l}`));
  if (run.debug_files.length > 0) lines.push("", `Debug files: ${run.debug_files.join(", ")}`);
  const attach = size > 0 && size <= ATTACH_LIMIT;
  if (size > ATTACH_LIMIT) lines.push("", `errors.csv (${size} bytes) is too big to attach; read it from the run's debug files.`);
  return {
    to,
    subject: maskSecrets(`[conveyor] ${name}: ${run.undo_of ? `undo of ${run.undo_of} ` : ""}${run.outcome ?? "running"}`),
    text: maskSecrets(lines.join("\n")),
    ...(attach ? { attachments: [{ filename: "errors.csv", path: errorsFile }] } : {}),
  };
}

export function failedAlert(run: RunRecord, name: string, to: string): MailMessage {
  return {
    to,
    subject: maskSecrets(`[conveyor] ALERT: ${name} failed`),
    text: maskSecrets(
      [
        `The ${run.trigger} ${run.undo_of ? `undo (of run ${run.undo_of})` : "run"} ${run.id} of ${name} (automation ${run.automation}) failed.`,
        run.guard ? `Stopped by the ${run.guard.name} guard: ${run.guard.message}` : "",
        run.error ? `Error (${run.error.code}): ${run.error.message}` : "",
        run.error?.hint ? `How to fix: ${run.error.hint}` : "",
        ...failureLines(run.failures ?? [], run.error),
      ]
        .filter(Boolean)
        .join("\n"),
    ),
  };
}

export function repeatedAlert(run: RunRecord, name: string, to: string, times: number): MailMessage {
  return {
    to,
    subject: maskSecrets(`[conveyor] ALERT: ${name} failed ${count(times, "time")} in a row`),
    text: maskSecrets(
      `${name} (automation ${run.automation}) has failed ${count(times, "time")} in a row; the last run was ${run.id}.\n` +
        (run.error ? `Last error (${run.error.code}): ${run.error.message}\n` : "") +
        (run.error?.hint ? `How to fix: ${run.error.hint}\n` : "") +
        "Nothing it should have done since the last good run has happened.",
    ),
  };
}

export function silenceAlert(key: string, name: string, to: string, since: string, hours: number): MailMessage {
  return {
    to,
    subject: maskSecrets(`[conveyor] ALERT: no new file for ${name} for ${count(hours, "hour")}`),
    text: maskSecrets(
      `${name} (automation ${key}) reads new files only (select: new), and no run has found one since ${since}.\n` +
        "A feed that stops arriving is a failure nobody sees otherwise: check with the sender that the files are still delivered.",
    ),
  };
}
