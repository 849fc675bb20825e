import { formatDuration } from "../duration.js";
import type { RunRecord } from "../state/index.js";
import { changesOf, durationMs } from "./format.js";
import { html, raw, type Html } from "./html.js";

/*
 * The last runs of an automation as a picture drawn on the server: for each
 * run (oldest left) a wide pale bar of the rows it read, a narrow bar of the
 * changes it made over it, coloured and patterned by outcome (so the outcome
 * reads without colour too), and a line of the run's duration on its own
 * scale. Presentation attributes only: the CSP allows no inline style.
 */

const W = 720;
const H = 240;
const PAD = { left: 48, right: 52, top: 16, bottom: 28 };

interface Look {
  fill: string;
  pattern: string | null;
  label: string;
}

const LOOKS: Record<string, Look> = {
  success: { fill: "#1a7f37", pattern: null, label: "success (solid)" },
  partial: { fill: "#8a5a00", pattern: "hatch", label: "partial (hatched)" },
  failed: { fill: "#b42318", pattern: "cross", label: "failed (cross-hatched)" },
  canceled: { fill: "#57606a", pattern: "dots", label: "canceled (dotted)" },
  nothing: { fill: "#57606a", pattern: "open", label: "nothing to do (outline)" },
  running: { fill: "#0b5cad", pattern: "dots", label: "running (dotted)" },
};

function lookOf(outcome: string | null): Look {
  return LOOKS[outcome ?? "running"] ?? LOOKS.running ?? { fill: "#57606a", pattern: null, label: "other" };
}

const DEFS = raw(`<defs>
<pattern id="p-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff"/><rect width="3" height="6" fill="#8a5a00"/></pattern>
<pattern id="p-cross" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#fff"/><path d="M0 0L6 6M6 0L0 6" stroke="#b42318" stroke-width="1.6"/></pattern>
<pattern id="p-dots" width="5" height="5" patternUnits="userSpaceOnUse"><rect width="5" height="5" fill="#fff"/><circle cx="2.5" cy="2.5" r="1.6" fill="#57606a"/></pattern>
</defs>`);

function fillOf(look: Look): { fill: string; stroke: string } {
  if (look.pattern === "open") return { fill: "#fff", stroke: look.fill };
  return { fill: look.pattern ? `url(#p-${look.pattern})` : look.fill, stroke: look.fill };
}

/** A swatch for the legend, drawn the same way as the bars. */
function swatch(look: Look): Html {
  const { fill, stroke } = fillOf(look);
  return html`<svg viewBox="0 0 14 14" aria-hidden="true" focusable="false"><rect x="1" y="1" width="12" height="12" fill="${fill}" stroke="${stroke}" stroke-width="1.5"/></svg>`;
}

function summary(runs: readonly RunRecord[]): string {
  if (runs.length === 0) return "No runs yet.";
  const byOutcome = new Map<string, number>();
  for (const r of runs) byOutcome.set(r.outcome ?? "running", (byOutcome.get(r.outcome ?? "running") ?? 0) + 1);
  const outcomes = [...byOutcome].map(([o, n]) => `${n} ${o}`).join(", ");
  const durations = runs.map(durationMs).filter((d): d is number => d !== null);
  const longest = durations.length ? `; longest ${formatDuration(Math.max(...durations))}` : "";
  const rows = Math.max(...runs.map((r) => r.counts?.rows ?? 0));
  const changes = Math.max(...runs.map((r) => changesOf(r.counts)));
  return `Last ${runs.length} run${runs.length === 1 ? "" : "s"}: ${outcomes}; at most ${rows} rows read and ${changes} changes in one run${longest}.`;
}

/** The chart of `runs` (newest first, as the store lists them), with its legend. */
export function runChart(runs: readonly RunRecord[]): Html {
  const ordered = [...runs].reverse();
  const label = summary(runs);
  if (ordered.length === 0) return html`<p>${label}</p>`;
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const maxRows = Math.max(1, ...ordered.map((r) => Math.max(r.counts?.rows ?? 0, changesOf(r.counts))));
  const maxMs = Math.max(1, ...ordered.map((r) => durationMs(r) ?? 0));
  const slots = Math.max(ordered.length, 10);
  const slot = plotW / slots;
  // Few runs stand at the right, next to "newest", rather than at the left under "older".
  const first = slots - ordered.length;
  const y = (v: number, max: number): number => PAD.top + plotH - (v / max) * plotH;
  const bars: Html[] = [];
  const points: string[] = [];
  ordered.forEach((run, i) => {
    const x = PAD.left + (first + i) * slot;
    const look = lookOf(run.outcome);
    const { fill, stroke } = fillOf(look);
    const rows = run.counts?.rows ?? 0;
    const changes = changesOf(run.counts);
    const ms = durationMs(run);
    const title = `${run.started.slice(0, 16).replace("T", " ")} UTC, ${run.mode}: ${run.outcome ?? "running"}, ${rows} rows, ${changes} changes${ms === null ? "" : `, ${formatDuration(ms)}`}`;
    const rowsTop = y(rows, maxRows);
    const changesTop = y(changes, maxRows);
    bars.push(html`<g><title>${title}</title>
<rect x="${(x + slot * 0.1).toFixed(1)}" y="${rowsTop.toFixed(1)}" width="${(slot * 0.8).toFixed(1)}" height="${(PAD.top + plotH - rowsTop).toFixed(1)}" fill="#dfe6ee"/>
<rect x="${(x + slot * 0.25).toFixed(1)}" y="${Math.min(changesTop, PAD.top + plotH - 2).toFixed(1)}" width="${(slot * 0.5).toFixed(1)}" height="${Math.max(2, PAD.top + plotH - changesTop).toFixed(1)}" fill="${fill}" stroke="${stroke}" stroke-width="1.2"/>
</g>`);
    if (ms !== null) points.push(`${(x + slot / 2).toFixed(1)},${y(ms, maxMs).toFixed(1)}`);
  });
  const base = PAD.top + plotH;
  const axes = html`<line x1="${PAD.left}" y1="${base}" x2="${W - PAD.right}" y2="${base}" stroke="#6e7781"/>
<text x="${PAD.left - 6}" y="${PAD.top + 10}" text-anchor="end" font-size="11" fill="#4a5561">${maxRows}</text>
<text x="${PAD.left - 6}" y="${base}" text-anchor="end" font-size="11" fill="#4a5561">0</text>
<text x="${W - PAD.right + 6}" y="${PAD.top + 10}" font-size="11" fill="#0b5cad">${formatDuration(maxMs)}</text>
<text x="${PAD.left}" y="${H - 8}" font-size="11" fill="#4a5561">older</text>
<text x="${W - PAD.right}" y="${H - 8}" text-anchor="end" font-size="11" fill="#4a5561">newest</text>`;
  const line = points.length > 1 ? html`<polyline points="${points.join(" ")}" fill="none" stroke="#0b5cad" stroke-width="2" stroke-dasharray="5 3"/>` : "";
  const dots = points.map((p) => {
    const [cx, cy] = p.split(",");
    return html`<circle cx="${cx}" cy="${cy}" r="3" fill="#0b5cad"/>`;
  });
  const used = [...new Set(ordered.map((r) => r.outcome ?? "running"))].map((o) => lookOf(o));
  return html`<figure class="chart">
<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${label}" xmlns="http://www.w3.org/2000/svg">${DEFS}${axes}${bars}${line}${dots}</svg>
<figcaption>${label} Pale bars: rows read; coloured bars: changes made (created, updated, removed); dashed line: duration (right scale). Hover a bar for its run.</figcaption>
<ul class="legend">${used.map((l) => html`<li>${swatch(l)} ${l.label}</li>`)}<li><svg viewBox="0 0 14 14" aria-hidden="true" focusable="false"><rect x="1" y="1" width="12" height="12" fill="#dfe6ee"/></svg> rows read</li></ul>
</figure>`;
}
