/**
 * The plan viewer's `<main>` content: a GET filter form (action, field,
 * identifier), a table of planned changes with each field's value before and
 * after (`<del>` and `<ins>`, each with text a screen reader says), and the
 * pager. A GET form keeps every page a link: back, bookmark, share.
 *
 * @module
 */

import { html, type Html } from "../html.js";
import type { PlanRow } from "../plan/tables.js";
import type { PlanPageData } from "../run-data.js";
import { pager } from "./pager.js";
import { runPaths } from "./paths.js";

const int = (n: number): string => n.toLocaleString("en-US");

function options(counts: Record<string, number>, selected: string | undefined, all: string): Html {
  const names = Object.keys(counts).filter((k) => k !== "").sort();
  // A value asked for that the plan does not have stays selected, so the form shows what was filtered.
  if (selected && !names.includes(selected)) names.unshift(selected);
  return html`<option value="">${all}</option>${names.map((n) => html`<option value="${n}"${n === selected ? " selected" : ""}>${n} (${int(counts[n] ?? 0)})</option>`)}`;
}

function filterForm(data: PlanPageData): Html {
  const plan = data.plan;
  const f = data.filter;
  return html`<form class="plan-filter" method="get" action="${runPaths(data.run.id).plan}" role="search" aria-label="Filter the plan">
  <div><label for="f-action">Action</label>
    <select id="f-action" name="action">${options(plan?.actions ?? {}, f.action, "all actions")}</select></div>
  <div><label for="f-field">Field</label>
    <select id="f-field" name="field">${options(plan?.fields ?? {}, f.field, "all fields")}</select></div>
  <div><label for="f-identifier">Identifier</label>
    <input id="f-identifier" name="identifier" type="search" value="${f.identifier ?? ""}" maxlength="500" aria-describedby="f-identifier-hint" autocomplete="off">
    <small id="f-identifier-hint">Exact, or the beginning followed by <kbd>*</kbd> (SKU-1*).</small></div>
  <div class="actions"><button type="submit">Filter</button> <a href="${runPaths(data.run.id).plan}">Clear</a></div>
</form>`;
}

function change(row: PlanRow): Html {
  if (row.field === "") return html`<span class="reason">${row.reason ?? ""}</span>`;
  const before = row.change === "new" ? html`<span class="none">(new)</span>` : html`<del><span class="visually-hidden">before: </span>${row.before === "" ? html`<span class="none">(empty)</span>` : row.before}</del>`;
  const after = html`<ins><span class="visually-hidden">after: </span>${row.after === "" ? html`<span class="none">(empty)</span>` : row.after}</ins>`;
  const same = row.change === "same" ? html` <span class="same">(the service holds it already)</span>` : null;
  return html`${before} <span aria-hidden="true">→</span> ${after}${same}`;
}

function table(data: PlanPageData): Html {
  const plan = data.plan;
  if (!plan) return html`<p>This run has no plan.csv: only a debug run (or an undo) writes one, and only when it planned a change.</p>`;
  if (plan.rows.length === 0) return html`<p role="status">No planned change matches.</p>`;
  return html`<table class="plan">
  <caption class="visually-hidden">Planned changes, page ${plan.page}</caption>
  <thead><tr><th scope="col">Line</th><th scope="col">Identifier</th><th scope="col">Action</th><th scope="col">Field</th><th scope="col">Before → after</th></tr></thead>
  <tbody>${plan.rows.map((r) => html`<tr><td class="num">${r.line}</td><td>${r.identifier}</td><td>${r.action || r.operation}</td><td>${r.field}</td><td class="change">${change(r)}</td></tr>`)}</tbody>
</table>`;
}

function counted(data: PlanPageData): Html | null {
  const plan = data.plan;
  if (!plan) return null;
  // A filter by identifier knows its total only once a scan reached the end of the plan.
  const seen = (plan.page - 1) * 100 + plan.rows.length;
  const shown = plan.total === null ? `At least ${int(seen)} planned ${seen === 1 ? "change" : "changes"}` : `${int(plan.total)} planned ${plan.total === 1 ? "change" : "changes"}`;
  return html`<p class="plan-count" role="status">${shown}${plan.total !== null && (data.filter.action || data.filter.field || data.filter.identifier) ? " match the filter" : ""}.</p>`;
}

export function renderPlanPage(data: PlanPageData, _o: { csrf: string }): Html {
  const paths = runPaths(data.run.id);
  const plan = data.plan;
  return html`<h1>Plan of run <code>${data.run.id}</code></h1>
<p><a href="${paths.page}">Back to the run</a> · <a href="${paths.file("plan.csv")}" download>Download plan.csv</a></p>
${filterForm(data)}
${counted(data)}
${table(data)}
${plan?.cut_off ? html`<p class="note">plan.csv ends in a line cut off while it was written (the run was stopped): it is not shown.</p>` : null}
${plan
  ? pager({
      path: paths.plan,
      params: { action: data.filter.action, field: data.filter.field, identifier: data.filter.identifier },
      pageParam: "page",
      page: plan.page,
      pages: plan.pages,
      more: plan.more,
      label: "Plan pages",
    })
  : null}`;
}
