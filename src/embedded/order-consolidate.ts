import type { ServiceContext } from "./context.js";
import type { ChangeSource } from "./log-store.js";
import { applyOrderBody, str, validateOrder, type Body } from "./order-model.js";
import type { StoredItem, StoredOrder } from "./order-store.js";

export type ConsolidateResult =
  | { ok: true; oid: number; created: number[]; message: string }
  | { ok: false; status: number; problems: string[] };

const TOTALS = ["total", "itemtotal", "shippingtotal", "handlingtotal", "taxtotal", "discounttotal"] as const;

/** `oid` as a number, a comma list or an array of oids or order strings. */
function ids(value: unknown): string[] {
  const parts = Array.isArray(value) ? value.map(str) : str(value).split(",");
  return parts.map((p) => p.trim()).filter(Boolean);
}

function sum(a: string | undefined, b: string | undefined): string {
  const x = Number(a || 0);
  const y = Number(b || 0);
  return Number.isFinite(x) && Number.isFinite(y) ? String(Math.round((x + y) * 100) / 100) : a ?? "";
}

function without(body: Body, ...keys: string[]): Body {
  const out = { ...body };
  for (const k of keys) delete out[k];
  return out;
}

function log(ctx: ServiceContext, source: ChangeSource, action: string, order: StoredOrder, message: string, body: Body): void {
  ctx.logs.write({ source, type: "order", action, identifier: order.fields.order ?? String(order.oid), result: "success", message, fieldData: body, details: { oid: order.oid } });
}

/**
 * Combine: the first oid is the parent (or `oid` is combined into
 * `oidconsolidate`). The others' lines, shipments and refunds move to the
 * parent, their totals are added to its totals, and they are archived with
 * `oidconsolidate` = the parent's oid. Other body fields update the parent.
 */
export function combineOrders(ctx: ServiceContext, body: Body, source: ChangeSource): ConsolidateResult {
  const list = ids(body.oid);
  if (list.length === 1 && str(body.oidconsolidate)) list.unshift(str(body.oidconsolidate));
  if (list.length < 2) return { ok: false, status: 400, problems: ["oid is required: give two or more oids to combine (the first is the parent), or oid and oidconsolidate = the parent's oid"] };
  return ctx.db.transaction((): ConsolidateResult => {
    const orders: StoredOrder[] = [];
    for (const id of list) {
      const order = ctx.orders.resolve(id);
      if (!order) return { ok: false, status: 404, problems: [`no order ${JSON.stringify(id)}`] };
      if (order.fields.archived === "1") return { ok: false, status: 400, problems: [`order ${id} is archived and cannot be combined`] };
      if (orders.some((o) => o.oid === order.oid)) return { ok: false, status: 400, problems: [`order ${id} is named twice`] };
      orders.push(order);
    }
    const [parent, ...children] = orders as [StoredOrder, ...StoredOrder[]];
    const rest = without(body, "oid", "oidconsolidate");
    const problems = validateOrder(rest, false);
    if (problems.length) return { ok: false, status: 400, problems };
    for (const child of children) {
      parent.items.push(...child.items);
      parent.shipments.push(...child.shipments);
      parent.refunds.push(...child.refunds);
      for (const t of TOTALS) if (child.fields[t]) parent.fields[t] = sum(parent.fields[t], child.fields[t]);
      applyOrderBody(child, { archived: "1", oidconsolidate: String(parent.oid) }, context(ctx));
      ctx.orders.save(child);
      log(ctx, source, "combine", child, `combined into order ${parent.oid} and archived`, body);
    }
    applyOrderBody(parent, rest, context(ctx));
    ctx.orders.save(parent);
    const message = `orders ${children.map((c) => c.oid).join(", ")} combined into order ${parent.oid}`;
    log(ctx, source, "combine", parent, message, body);
    return { ok: true, oid: parent.oid, created: [], message };
  })();
}

/**
 * Split: the order named by `oid` is archived and its lines go to new orders
 * whose `oidconsolidate` is the archived oid. `itemids` (array or comma list)
 * picks the lines of the first new order and the rest form the second;
 * without it every line becomes its own order. New ordernumbers get `-1`,
 * `-2`… appended; each new total is the sum of its lines' price × quantity.
 */
export function splitOrder(ctx: ServiceContext, body: Body, source: ChangeSource): ConsolidateResult {
  const [id, ...extra] = ids(body.oid);
  if (!id || extra.length) return { ok: false, status: 400, problems: ["oid is required: give the one oid (or order) to split"] };
  return ctx.db.transaction((): ConsolidateResult => {
    const order = ctx.orders.resolve(id);
    if (!order) return { ok: false, status: 404, problems: [`no order ${JSON.stringify(id)}`] };
    if (order.fields.archived === "1") return { ok: false, status: 400, problems: [`order ${id} is archived and cannot be split`] };
    const chosen = new Set(ids(body.itemids));
    const unknown = [...chosen].filter((c) => !order.items.some((l) => l.fields.itemid === c));
    if (unknown.length) return { ok: false, status: 400, problems: [`the order has no items with itemid ${unknown.join(", ")}`] };
    const groups: StoredItem[][] = chosen.size
      ? [order.items.filter((l) => chosen.has(l.fields.itemid ?? "")), order.items.filter((l) => !chosen.has(l.fields.itemid ?? ""))]
      : order.items.map((l) => [l]);
    if (groups.length < 2 || groups.some((g) => g.length === 0)) return { ok: false, status: 400, problems: ["a split needs lines on both sides: the order must have two or more items and itemids must leave some behind"] };
    const rest = without(body, "oid", "itemids", "oidconsolidate");
    const created: number[] = [];
    groups.forEach((lines, n) => {
      const total = lines.reduce((acc, l) => acc + Number(l.fields.price || 0) * Number(l.fields.quantity || 1), 0);
      const fresh = structuredClone({ ...order, items: lines });
      for (const t of TOTALS) delete fresh.fields[t];
      Object.assign(fresh.fields, { total: String(Math.round(total * 100) / 100), itemtotal: String(Math.round(total * 100) / 100) });
      applyOrderBody(fresh, { ...rest, ordernumber: `${order.fields.ordernumber ?? ""}-${n + 1}`, oidconsolidate: String(order.oid) }, context(ctx));
      const { oid: _oid, ...data } = fresh;
      const oid = ctx.orders.insert(data);
      created.push(oid);
      log(ctx, source, "split", { ...data, oid }, `split from order ${order.oid}`, body);
    });
    applyOrderBody(order, { archived: "1" }, context(ctx));
    ctx.orders.save(order);
    const message = `order ${order.oid} split into orders ${created.join(", ")} and archived`;
    log(ctx, source, "split", order, message, body);
    return { ok: true, oid: order.oid, created, message };
  })();
}

function context(ctx: ServiceContext): Parameters<typeof applyOrderBody>[2] {
  return { now: ctx.now(), product: (sku) => ctx.items.find("guid", sku), nextId: (kind) => ctx.orders.nextId(kind) };
}
