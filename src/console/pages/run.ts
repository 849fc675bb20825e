/**
 * The run page's `<main>` content: what the run was, how it ended and why,
 * its stage timings, counts, files read, failures, debug files and errors.csv;
 * while it runs, a progress block the script `run-live.js` keeps current
 * (its `data-live-*` attributes) and announces through `aria-live`.
 *
 * @module
 */

import { formatDuration } from "../../duration.js";
import { html, type Html } from "../html.js";
import type { LiveData, RunPageData } from "../run-data.js";
import { pager } from "./pager.js";
import { runPaths } from "./paths.js";

export interface RunPageOptions {
  csrf: string;
  /** Where the page's script is served (the frame's asset route); no script tag when absent. */
  liveScript?: string;
}

const int = (n: number): string => n.toLocaleString("en-US");

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${int(bytes)} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit] ?? "TB"}`;
}

/** The text the live block announces: "read: 12,000 rows, 3,400 rows/s". */
export function liveText(live: Pick<LiveData, "state" | "outcome" | "progress">): string {
  if (live.state === "finished") return `Finished: ${live.outcome ?? "unknown"}`;
  const p = live.progress;
  if (!p) return "Starting";
  const files = p.files ? `, ${int(p.files.done)} of ${int(p.files.total)} bulk files` : "";
  const rate = p.rate > 0 ? `, ${int(p.rate)} rows/s` : "";
  return `${p.stage}: ${int(p.rows)} rows${rate}${files}`;
}

function liveBlock(data: RunPageData, o: RunPageOptions): Html {
  const paths = runPaths(data.run.id);
  const p = data.run.progress;
  return html`<section class="run-live" aria-labelledby="live-h" data-live data-live-url="${paths.live}">
  <h2 id="live-h">Progress</h2>
  <p class="live-text" aria-live="polite" data-live-text>${liveText({ state: "running", outcome: null, progress: p ?? null })}</p>
  <dl>
    <dt>Stage</dt><dd data-live-field="stage">${p?.stage ?? "starting"}</dd>
    <dt>Rows</dt><dd data-live-field="rows">${int(p?.rows ?? 0)}</dd>
    <dt>Rate</dt><dd data-live-field="rate">${p && p.rate > 0 ? `${int(p.rate)} rows/s` : "–"}</dd>
    <dt>Bulk files</dt><dd data-live-field="files">${p?.files ? `${int(p.files.done)} of ${int(p.files.total)}` : "–"}</dd>
  </dl>
  <progress data-live-field="bar" aria-label="Bulk files sent" max="${p?.files?.total ?? 1}" value="${p?.files?.done ?? 0}"${p?.files ? "" : " hidden"}></progress>
  <p class="live-hint">The page reloads with the summary when the run finishes.</p>
  ${o.liveScript ? html`<script src="${o.liveScript}" defer></script>` : null}
</section>`;
}

function summary(data: RunPageData): Html {
  const r = data.run;
  const took = r.finished ? formatDuration(Date.parse(r.finished) - Date.parse(r.started)) : null;
  return html`<section aria-labelledby="summary-h">
  <h2 id="summary-h">Summary</h2>
  <dl class="run-summary">
    <dt>Automation</dt><dd><a href="/automations/${encodeURIComponent(r.automation)}">${data.automationName ?? r.automation}</a></dd>
    <dt>Outcome</dt><dd><span class="outcome outcome-${r.outcome ?? "running"}">${r.outcome ?? "running"}</span></dd>
    <dt>Mode</dt><dd>${r.mode === "debug" ? "debug (dry run: nothing was written)" : "live"}${r.diff ? ", diff" : ", full"}${r.force ? ", forced" : ""}</dd>
    <dt>Trigger</dt><dd>${r.trigger}</dd>
    ${data.events.length ? html`<dt>Events</dt><dd><ul class="events">${data.events.map((e) => html`<li><code>${e}</code></li>`)}</ul></dd>` : null}
    <dt>Started</dt><dd><time datetime="${r.started}">${r.started}</time></dd>
    <dt>Finished</dt><dd>${r.finished ? html`<time datetime="${r.finished}">${r.finished}</time> (took ${took})` : "still running"}</dd>
    <dt>Requests</dt><dd>${int(r.requests.read)} reads, ${int(r.requests.write)} writes</dd>
    ${r.note ? html`<dt>Note</dt><dd>${r.note}</dd>` : null}
    ${r.undo_of ? html`<dt>Undo of</dt><dd><a href="${runPaths(r.undo_of).page}">${r.undo_of}</a>, ${int(r.conflicts ?? 0)} conflicting fields left alone</dd>` : null}
  </dl>
</section>`;
}

function stopped(data: RunPageData): Html | null {
  const { guard, error } = data.run;
  if (!guard && !error) return null;
  return html`<section class="run-stopped" aria-labelledby="stopped-h">
  <h2 id="stopped-h">What stopped it</h2>
  ${guard ? html`<p><strong>Guard ${guard.name}:</strong> ${guard.message}</p>` : null}
  ${error ? html`<p><strong>Error (${error.code}):</strong> ${error.message}</p>${error.hint ? html`<p class="hint"><strong>What to do:</strong> ${error.hint}</p>` : null}` : null}
</section>`;
}

function counts(data: RunPageData): Html {
  const c = data.run.counts;
  const rows: Array<[string, number]> = [
    ["Rows read", c.rows], ["Row errors", c.row_errors], ["Created", c.create], ["Updated", c.update], ["Unchanged", c.unchanged],
    ["Removed", c.remove], ["Skipped", c.skipped], ["Failed", c.failed], ["Merged into earlier rows", c.merged],
  ];
  return html`<section aria-labelledby="counts-h">
  <h2 id="counts-h">Counts</h2>
  <table class="counts"><caption class="visually-hidden">Records by what the run did with them</caption>
    <tbody>${rows.map(([k, v]) => html`<tr><th scope="row">${k}</th><td class="num">${int(v)}</td></tr>`)}</tbody>
  </table>
</section>`;
}

function timings(data: RunPageData): Html | null {
  if (!data.timings.length) return null;
  return html`<section aria-labelledby="timings-h">
  <h2 id="timings-h">Stage timings</h2>
  <table><thead><tr><th scope="col">Stage</th><th scope="col">Began</th><th scope="col">Took</th></tr></thead>
    <tbody>${data.timings.map((t) => html`<tr><th scope="row">${t.stage}</th><td><time datetime="${t.at}">${t.at}</time></td><td class="num">${t.seconds === null ? "–" : `${t.seconds.toFixed(1)} s`}</td></tr>`)}</tbody>
  </table>
</section>`;
}

function files(data: RunPageData): Html {
  const list = data.run.files;
  return html`<section aria-labelledby="files-h">
  <h2 id="files-h">Files read</h2>
  ${list.length === 0
    ? html`<p>None.</p>`
    : html`<table><thead><tr><th scope="col">File</th><th scope="col">Size</th><th scope="col">SHA-256</th></tr></thead>
    <tbody>${list.map((f) => html`<tr><th scope="row">${f.name}</th><td class="num">${formatBytes(f.size)} <span class="visually-hidden">(${int(f.size)} bytes)</span></td><td><code class="hash">${f.sha256}</code></td></tr>`)}</tbody></table>`}
</section>`;
}

function failures(data: RunPageData): Html | null {
  const list = data.run.failures ?? [];
  if (!list.length) return null;
  return html`<section aria-labelledby="failures-h">
  <h2 id="failures-h">Records the service refused</h2>
  <ul>${list.map((f) => html`<li>${int(f.count)} × ${f.message}${f.examples.length ? html` (for example ${f.examples.join(", ")})` : null}</li>`)}</ul>
</section>`;
}

function debugFiles(data: RunPageData): Html {
  const paths = runPaths(data.run.id);
  const names = data.run.debug_files;
  return html`<section aria-labelledby="debug-h">
  <h2 id="debug-h">Debug files</h2>
  ${data.hasPlan ? html`<p><a class="button" href="${paths.plan}">Open the plan viewer</a> (each planned change, before and after)</p>` : null}
  ${names.length === 0
    ? html`<p>${data.run.finished ? "This run kept none." : "Listed when the run finishes."}</p>`
    : html`<ul class="debug-files">${names.map((n) => html`<li><a href="${paths.file(n)}" download>${n}</a></li>`)}</ul>`}
  ${(data.run.masked ?? []).map((m) => html`<p class="note">${m.note}</p>`)}
</section>`;
}

function errors(data: RunPageData): Html | null {
  const page = data.errors;
  if (!page) return null;
  const paths = runPaths(data.run.id);
  return html`<section aria-labelledby="errors-h">
  <h2 id="errors-h">Errors (${int(page.total ?? 0)})</h2>
  <table class="errors"><caption class="visually-hidden">errors.csv, page ${page.page}</caption>
    <thead><tr><th scope="col">Row</th><th scope="col">Feed line</th><th scope="col">Identifier</th><th scope="col">Message</th></tr></thead>
    <tbody>${page.rows.map((e) => html`<tr><td class="num">${e.row}</td><td class="num">${e.line ?? "–"}</td><td>${e.identifier}</td><td>${e.message}</td></tr>`)}</tbody>
  </table>
  ${page.cut_off ? html`<p class="note">errors.csv ends in a line cut off while it was written: not shown.</p>` : null}
  ${page.pages !== null && page.pages > 1 ? pager({ path: paths.page, params: {}, pageParam: "errors_page", page: page.page, pages: page.pages, more: page.more, label: "Error pages" }) : null}
</section>`;
}

export function renderRunPage(data: RunPageData, o: RunPageOptions): Html {
  const running = data.run.finished === null;
  return html`<h1>Run <code>${data.run.id}</code></h1>
${running ? liveBlock(data, o) : null}
${stopped(data)}
${summary(data)}
${counts(data)}
${timings(data)}
${files(data)}
${failures(data)}
${debugFiles(data)}
${errors(data)}`;
}
