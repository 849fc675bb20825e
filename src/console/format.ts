import type { RunCounts, RunRecord } from "../state/index.js";
import { html, type Html } from "./html.js";

/** `2026-11-25 23:48` in the zone given (UTC by default), inside a `<time>` with the exact instant. */
export function when(iso: string | Date | null | undefined, timeZone = "UTC"): Html {
  if (iso === null || iso === undefined) return html`<span class="none">—</span>`;
  const date = typeof iso === "string" ? new Date(iso) : iso;
  if (Number.isNaN(date.getTime())) return html`${String(iso)}`;
  let shown: string;
  try {
    const parts = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).formatToParts(date);
    const get = (type: string): string => parts.find((p) => p.type === type)?.value ?? "";
    shown = `${get("year")}-${get("month")}-${get("day")} ${get("hour")}:${get("minute")}`;
  } catch {
    // A zone the runtime does not know: the instant in UTC, said so.
    shown = date.toISOString().slice(0, 16).replace("T", " ");
    timeZone = "UTC";
  }
  return html`<time datetime="${date.toISOString()}">${shown} <span class="tz">${timeZone}</span></time>`;
}

/** What a run changed, in words: `120 rows · 3 created · 10 updated`. */
export function countsText(counts: RunCounts | undefined): string {
  if (!counts) return "";
  const parts = [`${counts.rows} rows`];
  for (const [n, label] of [
    [counts.create, "created"],
    [counts.update, "updated"],
    [counts.remove, "removed"],
    [counts.failed, "failed"],
  ] as const) {
    if (n > 0) parts.push(`${n} ${label}`);
  }
  return parts.join(" · ");
}

export function changesOf(counts: RunCounts | undefined): number {
  return counts ? counts.create + counts.update + counts.remove : 0;
}

/** Run length in milliseconds; null while it runs. */
export function durationMs(run: Pick<RunRecord, "started" | "finished">): number | null {
  if (!run.finished) return null;
  const ms = Date.parse(run.finished) - Date.parse(run.started);
  return Number.isFinite(ms) && ms >= 0 ? ms : null;
}

/** An outcome as a badge; the word is always there, the colour only repeats it. */
export function outcomeBadge(outcome: string | null | undefined): Html {
  const word = outcome ?? "running";
  return html`<span class="badge badge-${/^[a-z]+$/.test(word) ? word : "other"}">${word}</span>`;
}
