import type { ServiceContext } from "./context.js";
import type { ChangeSource } from "./log-store.js";
import { applyOrderBody, emptyOrder, validateOrder, type ApplyContext, type Body } from "./order-model.js";
import type { StoredOrder } from "./order-store.js";

export type OpResult = { ok: true; oid: number; message: string } | { ok: false; status: number; problems: string[] };

function applyContext(ctx: ServiceContext): ApplyContext {
  return {
    now: ctx.now(),
    product: (sku) => ctx.items.find("guid", sku),
    nextId: (kind) => ctx.orders.nextId(kind),
  };
}

function log(ctx: ServiceContext, source: ChangeSource, action: string, order: StoredOrder | undefined, identifier: string, result: OpResult, body: Body): void {
  ctx.logs.write({
    source,
    type: "order",
    action,
    identifier: order?.fields.order || identifier,
    result: result.ok ? "success" : "error",
    message: result.ok ? result.message : result.problems.join("; "),
    fieldData: body,
    details: { oid: result.ok ? result.oid : order?.oid ?? null },
  });
}

const fail = (status: number, ...problems: string[]): OpResult => ({ ok: false, status, problems });

/** Create one order (code 1). A second active order with the same `order` is refused: update the first instead. */
export function createOrder(ctx: ServiceContext, body: Body, source: ChangeSource): OpResult {
  return ctx.db.transaction((): OpResult => {
    const problems = validateOrder(body, true);
    const data = emptyOrder();
    if (problems.length === 0) problems.push(...applyOrderBody(data, { ...body, archived: body.archived ?? "0" }, applyContext(ctx)));
    const order = data.fields.order ?? "";
    if (problems.length === 0 && ctx.orders.activeExists(order)) problems.push(`order ${JSON.stringify(order)} already exists; update it (PATCH /v3/orders/${encodeURIComponent(order)}) instead of creating another`);
    if (problems.length) {
      const result = fail(400, ...problems);
      log(ctx, source, "import", undefined, `${str(body.channel)}${str(body.ordernumber)}`, result, body);
      return result;
    }
    const oid = ctx.orders.insert(data);
    const result: OpResult = { ok: true, oid, message: `order ${order} created` };
    log(ctx, source, "import", { ...data, oid }, order, result, body);
    return result;
  })();
}

function str(v: unknown): string {
  return typeof v === "string" || typeof v === "number" ? String(v) : "";
}

/** Update one order named by oid or `order` (code 2). */
export function updateOrder(ctx: ServiceContext, id: string, body: Body, source: ChangeSource): OpResult {
  return ctx.db.transaction((): OpResult => {
    const order = ctx.orders.resolve(id);
    if (!order) return fail(404, `no order ${JSON.stringify(id)}: give its oid or its order (channel + ordernumber)`);
    const problems = validateOrder(body, false);
    const next: StoredOrder = structuredClone(order);
    if (problems.length === 0) problems.push(...applyOrderBody(next, body, applyContext(ctx)));
    if (problems.length) {
      const result = fail(400, ...problems);
      log(ctx, source, "edit", order, id, result, body);
      return result;
    }
    ctx.orders.save(next);
    const shipped = next.fields.shippingstatus === "COMPLETE" && order.fields.shippingstatus !== "COMPLETE";
    const result: OpResult = { ok: true, oid: order.oid, message: shipped ? "order updated and marked shipped" : "order updated" };
    log(ctx, source, shipped ? "tracking" : "edit", next, id, result, body);
    return result;
  })();
}

/** Delete = archive (code 3): the record stays with `archived` 1. */
export function archiveOrder(ctx: ServiceContext, id: string, body: Body, source: ChangeSource): OpResult {
  return ctx.db.transaction((): OpResult => {
    const order = ctx.orders.resolve(id);
    if (!order) return fail(404, `no order ${JSON.stringify(id)}: give its oid or its order (channel + ordernumber)`);
    const rest = { ...body };
    delete rest.oid;
    delete rest.order;
    const next: StoredOrder = structuredClone(order);
    const problems = [...validateOrder(rest, false)];
    if (problems.length === 0) problems.push(...applyOrderBody(next, { ...rest, archived: "1" }, applyContext(ctx)));
    if (problems.length) return fail(400, ...problems);
    ctx.orders.save(next);
    const result: OpResult = { ok: true, oid: order.oid, message: "order archived" };
    log(ctx, source, "delete", next, id, result, body);
    return result;
  })();
}
