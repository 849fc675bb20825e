import { EVENT_PREFIX, EVENT_TYPES, SUBSCRIBABLE } from "../embedded/webhook-events.js";
import { isRecord, type Add } from "./schema-common.js";

/**
 * `events` (our extension, issue #30): the service events that start an
 * automation. Written with or without the service prefix (`sds.order.created`
 * or `order.created`); kept without it. Only order exports take events, since
 * the service sends order events only and an event run narrows its search to
 * the events' orders.
 */

const PREFIX = `${EVENT_PREFIX}.`;

export const EVENTS_ALLOWED = [...SUBSCRIBABLE].join(", ");

/** `sds.order.created` → `order.created`; anything else as written. */
export function eventTypeOf(written: string): string {
  const trimmed = written.trim();
  return trimmed.startsWith(PREFIX) ? trimmed.slice(PREFIX.length) : trimmed;
}

/** The list as stored: prefix dropped, each type once, in the order first written. */
export function normalizeEvents(events: readonly string[]): string[] {
  return [...new Set(events.map(eventTypeOf))];
}

function refusal(type: string): string {
  const announced = EVENT_TYPES.find((e) => e.type === type && !e.enabled);
  if (announced) return `"${type}" is announced by the service but cannot be subscribed to yet`;
  return `"${type}" is not an event type of the service`;
}

/** The checks of `events` across fields; shapes (an array of texts) are the schema's. */
export function eventRules(top: Record<string, unknown>, add: Add): void {
  const events = top.events;
  if (events === undefined) {
    // The schema lets `schedule` go missing so that events alone may start an automation; without them it is required as ever.
    if (top.schedule === undefined) add(["schedule"], "required");
    return;
  }
  if (!Array.isArray(events)) return;
  if (events.length === 0) {
    add(["events"], "lists no event: leave `events` out, or name the events that start the automation", EVENTS_ALLOWED);
    return;
  }
  events.forEach((written: unknown, i) => {
    if (typeof written !== "string" || written.trim() === "") return;
    const type = eventTypeOf(written);
    if (!SUBSCRIBABLE.has(type)) add(["events", i], refusal(type), `${EVENTS_ALLOWED} (with or without the "${PREFIX}" prefix)`);
  });
  if (isOrderExport(top)) return;
  const what = typeof top.type === "string" && typeof top.action === "string" ? `a ${top.type} ${top.action}` : "this automation";
  add(["events"], `events start order exports only, not ${what}: the service sends order events, and an event run exports the events' orders`, "events with type orders and action export");
}

function isOrderExport(top: Record<string, unknown>): boolean {
  return top.type === "orders" && top.action === "export";
}

/** True for a definition (parsed or raw) that runs on events. */
export function runsOnEvents(automation: unknown): boolean {
  return isRecord(automation) && Array.isArray(automation.events) && automation.events.length > 0;
}
