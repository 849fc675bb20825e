/**
 * The pagination of the console's long tables (the plan, errors.csv): first,
 * previous, "page N of M", next, last, as plain links in a labelled `<nav>`,
 * so they are reached with Tab and work without the script. A link that
 * leads nowhere (previous on page 1) is text, marked disabled for screen readers.
 *
 * @module
 */

import { html, type Html } from "../html.js";

export interface PagerInput {
  /** The page's path, without a query. */
  path: string;
  /** The query to keep (filters); `pageParam` is set per link. */
  params: Record<string, string | undefined>;
  pageParam: string;
  page: number;
  /** null: not known yet (a filter by identifier not scanned to the end). */
  pages: number | null;
  more: boolean;
  /** What is paged, for the nav's label: "Plan pages". */
  label: string;
}

export function pageHref(path: string, params: Record<string, string | undefined>, pageParam: string, page: number): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "" && k !== pageParam) q.set(k, v);
  if (page > 1) q.set(pageParam, String(page));
  const query = q.toString();
  return query ? `${path}?${query}` : path;
}

function link(text: string, rel: string, target: number | null, p: PagerInput): Html {
  if (target === null) return html`<li><span class="pager-off" aria-disabled="true">${text}</span></li>`;
  return html`<li><a href="${pageHref(p.path, p.params, p.pageParam, target)}" rel="${rel}">${text}</a></li>`;
}

export function pager(p: PagerInput): Html {
  const hasPrev = p.page > 1;
  const hasNext = p.more;
  const where = p.pages === null ? `Page ${p.page}` : `Page ${p.page} of ${p.pages}`;
  return html`<nav class="pager" aria-label="${p.label}">
  <ul>
    ${link("First", "first", hasPrev ? 1 : null, p)}
    ${link("Previous", "prev", hasPrev ? p.page - 1 : null, p)}
    <li aria-current="page">${where}</li>
    ${link("Next", "next", hasNext ? p.page + 1 : null, p)}
    ${link("Last", "last", p.pages !== null && p.page < p.pages ? p.pages : null, p)}
  </ul>
</nav>`;
}
