import { describe, expect, it } from "vitest";
import { toSchedulable } from "../../src/daemon/types.js";
import { orderExport, parsed, problemsOf, productImport } from "./helpers.js";

/** `events` (issue #30): which events start an automation, and what a definition on events may leave out. */

function onEvents(events: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const def: Record<string, unknown> = { ...orderExport(), events, ...extra };
  delete def.schedule;
  return def;
}

describe("events", () => {
  it("takes subscribable types with or without the sds. prefix, kept without it and once", () => {
    const a = parsed(onEvents(["sds.order.created", "order.updated", "order.created"]));
    expect(a.events).toEqual(["order.created", "order.updated"]);
    expect(a.schedule).toBeUndefined();
  });

  it("keeps a schedule beside events", () => {
    const a = parsed({ ...orderExport(), events: ["order.fulfilled"] });
    expect(a).toMatchObject({ schedule: "0 * * * *", events: ["order.fulfilled"] });
  });

  it("still requires schedule without events, with the message of old", () => {
    const def: Record<string, unknown> = { ...orderExport() };
    delete def.schedule;
    expect(problemsOf(def)).toEqual([{ path: "schedule", message: "required" }]);
  });

  it("refuses an unknown type, naming the allowed ones", () => {
    const [p, ...rest] = problemsOf(onEvents(["order.created", "order.shipped"]));
    expect(rest).toEqual([]);
    expect(p?.path).toBe("events[1]");
    expect(p?.message).toMatch(/"order.shipped" is not an event type/);
    expect(p?.allowed).toContain("order.created, order.updated, order.fulfilled, order.status_changed");
  });

  it("refuses an announced type that cannot be subscribed to yet", () => {
    const [p] = problemsOf(onEvents(["sds.product.updated"]));
    expect(p).toMatchObject({ path: "events[0]", message: expect.stringMatching(/announced .* cannot be subscribed to yet/) });
  });

  it("refuses an empty list and a list of non-texts", () => {
    expect(problemsOf(onEvents([]))[0]).toMatchObject({ path: "events", message: expect.stringMatching(/lists no event/) });
    expect(problemsOf(onEvents("order.created"))[0]?.path).toBe("events");
  });

  it("is for order exports only, and says so", () => {
    const [p, ...rest] = problemsOf({ ...productImport(), events: ["order.created"] });
    expect(rest).toEqual([]);
    expect(p).toMatchObject({ path: "events", message: expect.stringMatching(/order exports only, not a products import/), allowed: "events with type orders and action export" });
  });
});

describe("toSchedulable with events", () => {
  it("catches up every interval without a schedule, always diff", () => {
    const a = parsed(onEvents(["order.created"]));
    expect(toSchedulable("7", "acct", a, "v", 600_000)).toMatchObject({ schedule: "", everyMs: 600_000, diffOnly: true });
  });

  it("uses the schedule when there is one, still always diff", () => {
    const mapped = toSchedulable("7", "acct", parsed({ ...orderExport(), events: ["order.created"] }), "v", 600_000);
    expect(mapped).toMatchObject({ schedule: "0 * * * *", diffOnly: true });
    expect(mapped.everyMs).toBeUndefined();
  });

  it("leaves an automation without events as before", () => {
    const mapped = toSchedulable("7", "acct", parsed(orderExport()), "v", 600_000);
    expect(mapped.diffOnly).toBeUndefined();
    expect(mapped.everyMs).toBeUndefined();
  });
});
