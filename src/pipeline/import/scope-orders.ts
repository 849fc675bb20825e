/**
 * Step 5 of an order import (runs.md): the orders the file names, looked up
 * in batches with `q` = the config's `search` AND an OR of their identifiers
 * (`search (ordernumber:=A ordernumber:=B …)`); when the file config
 * removes, instead every order in `search`, since the removal candidates are
 * those the file does not name.
 *
 * Identifiers match as the search language compares text: trimmed, case
 * ignored. Several orders may carry one identifier (an `ordernumber` on two
 * channels, or an order archived and created again): an active order is
 * preferred to archived ones; two active (or, with none active, two
 * archived) orders make the identifier ambiguous, and the plan refuses it
 * rather than guess.
 *
 * Memory: whole orders are kept only for the identifiers the file names;
 * for the removal scope only identifier and oid of each order.
 *
 * @module
 */

import type { FileConfig } from "../../definition/index.js";
import type { Order, ServiceClient } from "../../service/index.js";
import { quoteSearchValue } from "../../search/index.js";

export const LOOKUP_BATCH = 40;

export interface OrderScope {
  /** Normalized identifier → the service's order. */
  found: Map<string, Order>;
  /** Normalized identifier → the oids that carry it, when more than one could be meant. */
  ambiguous: Map<string, string[]>;
  /** Active orders in `search` the file does not name (only when the config removes). */
  unnamed: Array<{ identifier: string; oid: string }>;
  /** What the remove_limit share is taken of: active orders in `search` (remove), else the orders found. */
  size: number;
}

export function normalizeId(value: string): string {
  return value.trim().toLowerCase();
}

function text(value: unknown): string {
  return typeof value === "string" || typeof value === "number" ? String(value) : "";
}

function archived(order: Order): boolean {
  const v = text(order.archived).toLowerCase();
  return v === "1" || v === "true" || order.archived === true;
}

class Candidates {
  private readonly byId = new Map<string, Order[]>();

  add(id: string, order: Order): void {
    const list = this.byId.get(id);
    if (list) {
      if (!list.some((o) => text(o.oid) === text(order.oid))) list.push(order);
    } else this.byId.set(id, [order]);
  }

  resolve(scope: OrderScope): void {
    for (const [id, orders] of this.byId) {
      const active = orders.filter((o) => !archived(o));
      const pool = active.length ? active : orders;
      const only = pool[0];
      if (pool.length === 1 && only) scope.found.set(id, only);
      else scope.ambiguous.set(id, pool.map((o) => text(o.oid)));
    }
  }
}

function lookupQuery(field: string, ids: readonly string[], search: string | undefined): string {
  const terms = ids.map((id) => `${quoteSearchValue(field)}:=${quoteSearchValue(id)}`).join(" ");
  const named = ids.length === 1 ? terms : `(${terms})`;
  return search?.trim() ? `${search.trim()} ${named}` : named;
}

/**
 * Every order of a query, page by page. The listing's `count` says when the
 * last page has come, so a lookup that fits one page costs one request (the
 * client's generic paging needs an extra, empty page to be sure).
 */
async function* orderPages(client: ServiceClient, q: string | undefined, signal: AbortSignal | undefined): AsyncGenerator<Order[]> {
  let seen = 0;
  for (let page = 1; ; page++) {
    const list = await client.listOrders({ q, page, signal });
    if (list.orders.length === 0) return;
    yield list.orders;
    seen += list.orders.length;
    if (seen >= list.count) return;
  }
}

/** `mentioned`: orders the file names but does not plan (skipped, failed rows); with `remove`, they are not archived. */
export async function readOrderScope(client: ServiceClient, config: FileConfig, identifiers: readonly string[], signal?: AbortSignal, mentioned: Iterable<string> = []): Promise<OrderScope> {
  const scope: OrderScope = { found: new Map(), ambiguous: new Map(), unnamed: [], size: 0 };
  const field = config.identifier;
  const named = new Set(identifiers.map(normalizeId));
  const kept = new Set([...mentioned].map(normalizeId));
  const candidates = new Candidates();
  if (config.remove !== undefined) {
    const q = config.search?.trim() || undefined;
    for await (const page of orderPages(client, q, signal)) {
      for (const order of page) {
        const id = normalizeId(text(order[field]));
        if (id === "") continue;
        if (named.has(id)) candidates.add(id, order);
        if (archived(order)) continue;
        scope.size++;
        if (!named.has(id) && !kept.has(id)) scope.unnamed.push({ identifier: text(order[field]).trim(), oid: text(order.oid) });
      }
    }
    candidates.resolve(scope);
    return scope;
  }
  // The search is sent with the file's spelling: a service may compare more strictly than the spec says.
  const spelled = new Map<string, string>();
  for (const id of identifiers) if (!spelled.has(normalizeId(id))) spelled.set(normalizeId(id), id.trim());
  const ids = [...spelled.values()];
  for (let i = 0; i < ids.length; i += LOOKUP_BATCH) {
    const batch = ids.slice(i, i + LOOKUP_BATCH);
    for await (const page of orderPages(client, lookupQuery(field, batch, config.search), signal)) {
      for (const order of page) {
        const id = normalizeId(text(order[field]));
        // The service's search may match more loosely than equality (numbers, patterns): keep exact hits only.
        if (named.has(id)) candidates.add(id, order);
      }
    }
  }
  candidates.resolve(scope);
  scope.size = scope.found.size;
  return scope;
}
