import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { csv, openHarness, type Harness } from "../harness.js";

/** change_limits (issue #33): whole product imports against the embedded service, stopped before they write, or not. */
const HEADER = ["guid", "title", "stock", "price", "cost"];
const FIELD_MAP = { guid: "guid", title: "title", stock: "stock", price: "price", cost: "cost" };
const id = (i: number): string => `P${String(i).padStart(5, "0")}`;
/** Stock 1 to 9, never zero; price 20 to 69; cost 60% of the price, as a supplier's list has them. */
const stockOf = (i: number): string => String((i % 9) + 1);
const priceOf = (i: number): string => `${20 + (i % 50)}.00`;
const costOf = (i: number): string => ((20 + (i % 50)) * 0.6).toFixed(2);
const row = (i: number, over: { stock?: string; price?: string } = {}): string[] => [id(i), `Part ${i}`, over.stock ?? stockOf(i), over.price ?? priceOf(i), costOf(i)];
const feed = (n: number, change: (i: number) => { stock?: string; price?: string } = () => ({})): string => csv(HEADER, Array.from({ length: n }, (_, i) => row(i, change(i))));

describe("change limits of a product import", () => {
  let h: Harness;
  const items = (): string => JSON.stringify([...h.items()]);
  const automation = (extra: Record<string, unknown> = {}) => h.automation({ field_map: FIELD_MAP, create: "add", update: "edit", ...extra });

  beforeEach(async () => {
    h = await openHarness();
    h.writeFeed("feed-1.csv", feed(100));
    const first = await h.run(automation());
    expect(first.counts.create).toBe(100);
  });
  afterEach(async () => {
    await h.close();
  });

  it("a feed that zeroes every stock stops before it writes, naming the field, the share, the limit and examples; --force applies it", async () => {
    h.writeFeed("feed-1.csv", feed(100, () => ({ stock: "0" })));
    const [jobs, before] = [h.bulkJobs().length, items()];
    const run = await h.run(automation());
    expect(run.outcome).toBe("failed");
    expect(run.guard?.name).toBe("change_limit");
    const message = run.guard?.message ?? "";
    expect(message).toContain("stock would go to zero or empty on 100 of the 100 records in scope (100%), over file_configs[0].change_limits.stock.zeroed 50%");
    expect(message).toContain("P00000 1 → 0, P00001 2 → 0, P00002 3 → 0, P00003 4 → 0, P00004 5 → 0, and 95 more");
    expect(message).toContain("nothing was written");
    expect(message).toContain("--force");
    expect(message).toContain("raise the limit in file_configs[0].change_limits.stock");
    expect(message).not.toContain("price");
    expect(h.bulkJobs()).toHaveLength(jobs);
    expect(items()).toBe(before);

    const forced = await h.run(automation(), { force: true });
    expect(forced.outcome).toBe("success");
    expect(forced.guard).toBeNull();
    expect(forced.counts.update).toBe(100);
    expect(h.items().get("P00042")?.stock).toBe("0");
  });

  it("prices shifted by a column (the cost in the price column) stop the run; a debug run says the same and --force applies", async () => {
    h.writeFeed("feed-1.csv", csv(HEADER, Array.from({ length: 100 }, (_, i) => row(i, { price: costOf(i) }))));
    const [jobs, before] = [h.bulkJobs().length, items()];
    const debug = await h.run(automation(), { mode: "debug" });
    expect(debug.guard?.name).toBe("change_limit");
    const run = await h.run(automation());
    expect(run.outcome).toBe("failed");
    expect(run.guard?.name).toBe("change_limit");
    const message = run.guard?.message ?? "";
    expect(message).toBe(debug.guard?.message);
    expect(message).toContain("price would move by more than 30% on 100 of the 100 records in scope (100%), over file_configs[0].change_limits.price.share 10%");
    expect(message).toContain("P00000 20.00 → 12.00");
    expect(h.bulkJobs()).toHaveLength(jobs);
    expect(items()).toBe(before);

    const forced = await h.run(automation(), { force: true });
    expect(forced.outcome).toBe("success");
    expect(h.items().get("P00001")?.price).toBe("12.60");
  });

  it("a price column holding the stock trips both price limits in one message", async () => {
    h.writeFeed("feed-1.csv", csv(HEADER, Array.from({ length: 100 }, (_, i) => row(i, { price: i % 10 === 0 ? "0" : stockOf(i) }))));
    const run = await h.run(automation());
    expect(run.guard?.name).toBe("change_limit");
    expect(run.guard?.message).toContain("price would go to zero or empty on 10 of the 100 records in scope (10%), over file_configs[0].change_limits.price.zeroed 5%");
    expect(run.guard?.message).toContain("price would move by more than 30% on 100 of the 100 records");
  });

  it("a normal nightly feed runs: some items sold out, a few prices moved a lot, the rest a little", async () => {
    const nightly = feed(100, (i) => ({
      ...(i % 4 === 0 ? { stock: "0" } : {}),
      price: i % 12 === 0 ? `${(20 + (i % 50)) * 2}.00` : `${((20 + (i % 50)) * 1.05).toFixed(2)}`,
    }));
    h.writeFeed("feed-1.csv", nightly);
    const run = await h.run(automation());
    expect(run.guard).toBeNull();
    expect(run.outcome).toBe("success");
    expect(h.items().get("P00004")?.stock).toBe("0");
    expect(h.items().get("P00012")?.price).toBe("64.00");
  });

  it("a diff run weighs the changes against the service too", async () => {
    h.writeFeed("feed-1.csv", feed(100, () => ({ stock: "" })));
    const run = await h.run(automation(), { diff: true });
    expect(run.guard?.name).toBe("change_limit");
    expect(run.guard?.message).toContain("stock would go to zero or empty on 100 of the 100 records in scope");
    expect(run.guard?.message).toContain("P00000 1 → (empty)");
  });

  it("custom limits: a lower share and a count stop what the defaults let through", async () => {
    h.writeFeed("feed-1.csv", feed(100, (i) => (i < 10 ? { stock: "0" } : {})));
    const before = items();
    const share = await h.run(automation({ change_limits: { stock: { zeroed: "5%" } } }));
    expect(share.guard?.message).toContain("10 of the 100 records in scope (10%), over file_configs[0].change_limits.stock.zeroed 5%");
    const count = await h.run(automation({ change_limits: { stock: { zeroed: 8 } } }));
    expect(count.guard?.message).toContain("over file_configs[0].change_limits.stock.zeroed 8");
    expect(items()).toBe(before);
    const enough = await h.run(automation({ change_limits: { stock: { zeroed: 10 } } }));
    expect(enough.outcome).toBe("success");
  });

  it("a moved limit of its own on another field, and false to turn a default off", async () => {
    h.writeFeed("feed-1.csv", feed(100, () => ({ stock: "0", price: "1.00" })));
    const off = await h.run(automation({ change_limits: { stock: false, price: { zeroed: null, moved: null } } }));
    expect(off.outcome).toBe("success");
    h.writeFeed("feed-1.csv", csv(HEADER, Array.from({ length: 100 }, (_, i) => [id(i), `Part ${i}`, "0", "1.00", "99.00"])));
    const cost = await h.run(automation({ change_limits: { cost: { moved: "100%", share: 20 } } }));
    expect(cost.guard?.message).toContain("cost would move by more than 100% on 100 of the 100 records in scope (100%), over file_configs[0].change_limits.cost.share 20");
    const none = await h.run(automation({ change_limits: false }));
    expect(none.outcome).toBe("success");
  });
});
