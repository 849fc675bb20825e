import { badRequest, wholeNumber } from "../../http/envelopes.js";
import type { PlanFilter } from "./tables.js";

const MAX_FILTER = 500;

/** A text filter from a query: absent or empty is no filter. */
function filterText(value: string | undefined, name: string): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (value.length > MAX_FILTER) throw badRequest(`${name} must be at most ${MAX_FILTER} characters, not ${value.length}`);
  return value;
}

/** `page`, `action`, `field`, `identifier` (`SKU-1*`: by prefix) of the plan's API route and page. */
export function planQuery(q: Record<string, string | undefined>): { page: number; filter: PlanFilter } {
  return {
    page: wholeNumber(q.page, "page", 1, 1_000_000_000, 1),
    filter: { action: filterText(q.action, "action"), field: filterText(q.field, "field"), identifier: filterText(q.identifier, "identifier") },
  };
}
