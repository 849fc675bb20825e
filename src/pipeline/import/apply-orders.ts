/**
 * Step 8 of an order import: send each bulk body and read the service's
 * answer back to its orders. `results.failed` is keyed by the order's index
 * in the body; the others succeeded. When the answer does not account for
 * every order (fewer successes than orders not failed), nothing in it says
 * which order a success belongs to, so the unconfirmed orders count as
 * failed: they keep their snapshot and the next run looks at them again,
 * which is harmless because an update only carries what still differs.
 *
 * A body the service refuses as a whole (HTTP 4xx: every order in it
 * failed) fails its orders and the run goes on; an error that says nothing
 * about the orders (network, 5xx after retries, throttling, credentials)
 * stops writing, and the orders of that body and the later ones are failed.
 *
 * @module
 */

import { toConveyorError, type ConveyorError } from "../../errors.js";
import type { MutationResult, ServiceClient } from "../../service/index.js";
import { NO_JOURNAL, orderKind, type ApplyJournal } from "../apply-journal.js";
import type { LogWriter } from "../logs.js";
import type { OrderBody } from "./order-bodies.js";
import type { ApplyResult } from "./apply-products.js";

export interface OrderApplyInput {
  client: ServiceClient;
  bodies: readonly OrderBody[];
  logs: LogWriter;
  signal?: AbortSignal;
  onBody?: (done: number, total: number) => void;
  /** Told as each body goes and its answer is read (the run record). */
  journal?: ApplyJournal;
}

function send(client: ServiceClient, body: OrderBody, signal: AbortSignal | undefined): Promise<MutationResult> {
  if (body.action === "create") return client.createOrders(body.body, signal);
  if (body.action === "update") return client.updateOrders(body.body, { idempotent: body.idempotent, signal });
  return client.archiveOrders(body.body, signal);
}

/** A refusal of the body itself: the orders in it failed, later bodies may still go. */
function refusedBody(err: ConveyorError): boolean {
  const status = err.details.status;
  return err.code === "service_http" && typeof status === "number" && status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 429;
}

/** The body never reached the service, or the service turned it away before looking at it (credentials, throttling). */
function neverTaken(err: ConveyorError): boolean {
  const status = err.details.status;
  return err.details.sent === false || (typeof status === "number" && status < 500);
}

function fieldsOf(body: OrderBody, index: number): string[] {
  const order = body.orders[index];
  if (!order) return [];
  const lists = (name: string, list: ReadonlyArray<Record<string, string>>): string[] => [...new Set(list.flatMap((e) => Object.keys(e).map((f) => `${name}.${f}`)))];
  return [...Object.keys(order.scalars), ...lists("items", order.items), ...lists("shipments", order.shipments), ...lists("refunds", order.refunds)];
}

export async function applyOrderBodies(input: OrderApplyInput): Promise<ApplyResult> {
  const result: ApplyResult = { succeeded: 0, failed: new Map(), error: null, writes: 0 };
  const journal = input.journal ?? NO_JOURNAL;
  await journal.planned(input.bodies.length);
  const fail = (body: OrderBody, index: number, message: string): void => {
    const order = body.orders[index];
    if (!order) return;
    result.failed.set(order.identifier, message);
    input.logs.add({ action: body.action, identifier: order.identifier, result: "error", message: { error: message }, requestId: body.name });
  };
  for (const [n, body] of input.bodies.entries()) {
    if (result.error) {
      body.orders.forEach((_o, i) => fail(body, i, `not sent: ${result.error?.message ?? ""}`));
      continue;
    }
    let answer: MutationResult;
    await journal.sending(body.name, body.orders.length);
    try {
      result.writes++;
      answer = await send(input.client, body, input.signal);
      await journal.accepted(body.name, null);
    } catch (raw) {
      const err = toConveyorError(raw);
      if (err.code === "canceled") throw err;
      if (!refusedBody(err)) result.error = err;
      // A refused body is the service's answer: none of its orders changed. A 5xx or a lost answer leaves it unconfirmed.
      if (refusedBody(err)) await journal.confirmed(body.name, orderKind(body.action), 0, body.orders.length);
      else if (neverTaken(err)) await journal.notSent(body.name);
      body.orders.forEach((_o, i) => fail(body, i, err.message));
      input.onBody?.(n + 1, input.bodies.length);
      continue;
    }
    const failed = new Map(answer.failed.map((f) => [f.index, f.message || `refused (code ${f.code})`]));
    const confirmed = answer.successful.length >= body.orders.length - failed.size;
    let succeeded = 0;
    body.orders.forEach((order, i) => {
      const refusal = failed.get(i);
      if (refusal !== undefined) return fail(body, i, refusal);
      if (!confirmed) return fail(body, i, `the service confirmed ${answer.successful.length} of the ${body.orders.length - failed.size} orders it did not refuse in ${body.name}, without saying which`);
      succeeded++;
      input.logs.add({ action: body.action, identifier: order.identifier, result: "success", message: { fields: fieldsOf(body, i) }, requestId: body.name });
    });
    result.succeeded += succeeded;
    await journal.confirmed(body.name, orderKind(body.action), succeeded, body.orders.length - succeeded);
    input.onBody?.(n + 1, input.bodies.length);
  }
  return result;
}
