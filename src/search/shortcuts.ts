import { quoteSearchValue } from "./tree.js";

/**
 * The order retrieval path forms of the seed (`/v3/orders/<segment>`) as search
 * expressions (search.md, "Order retrieval shortcuts").
 */

/** Every status an order can be retrieved by (seed part 3), including the read-only CANCELED and REFUNDED. */
export const ORDER_STATUSES = [
  "INCOMPLETE",
  "READY",
  "PENDING",
  "ORDERED",
  "DROPSHIPPED",
  "CANCELED",
  "REFUNDED",
  "COMPLETE",
  "ARCHIVED",
] as const;

export type OrderStatus = (typeof ORDER_STATUSES)[number];

const STATUS_SET = new Set<string>(ORDER_STATUSES);

/** Path segments under /v3/orders that are neither a search nor an oid: `lineitem` is the line-item listing. */
const NOT_SHORTCUTS = new Set(["lineitem"]);

/**
 * `shipped` → `shippingstatus:=COMPLETE`, `paid` → `paymentstatus:=COMPLETE`, an
 * order status (any case) → `status:=<STATUS>`, any other word → `channel:=<segment>`.
 * A numeric segment is an oid, not a search: undefined. So is a blank one.
 */
export function shortcutSearch(segment: string): string | undefined {
  const trimmed = segment.trim();
  if (trimmed === "" || /^\d+$/.test(trimmed)) return undefined;
  const lower = trimmed.toLowerCase();
  if (NOT_SHORTCUTS.has(lower)) return undefined;
  if (lower === "shipped") return "shippingstatus:=COMPLETE";
  if (lower === "paid") return "paymentstatus:=COMPLETE";
  const upper = trimmed.toUpperCase();
  if (STATUS_SET.has(upper)) return `status:=${upper}`;
  return `channel:=${quoteSearchValue(trimmed)}`;
}
