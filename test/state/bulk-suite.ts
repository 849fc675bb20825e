import { describe, expect, it, beforeEach, afterEach } from "vitest";
import type { LogRecord, StateStore } from "../../src/state/index.js";

/**
 * The bulk writes of the commit (an export's snapshot and a log record per
 * row): one statement per chunk, so a chunk boundary, an identifier named
 * twice and text that JSON must escape are what can go wrong.
 */
export function bulkSuite(name: string, open: () => Promise<StateStore>): void {
  describe(`state store bulk writes: ${name}`, () => {
    let store: StateStore;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    const awkward = ['quote "q"', "back\\slash", "comma, semi; tab\t", "new\nline", "Café Ölkanne", "emoji 🚲", "[\"json\"]", " spaced "];

    it("upserts snapshot chunks of every size, the last entry of an identifier winning across chunks", async () => {
      const entries = Array.from({ length: 25_000 }, (_, i) => ({ identifier: `P${i}`, values: { h: `h${i}` } }));
      entries.push({ identifier: "P3", values: { h: "again" } });
      await store.snapshotPut("bulk", entries);
      expect(await store.snapshotCount("bulk")).toBe(25_000);
      const got = await store.snapshotGet("bulk", ["P0", "P3", "P9999", "P10000", "P24999"]);
      expect(Object.fromEntries(got)).toEqual({ P0: { h: "h0" }, P3: { h: "again" }, P9999: { h: "h9999" }, P10000: { h: "h10000" }, P24999: { h: "h24999" } });
      await store.snapshotPut("bulk", []);
      expect(await store.snapshotCount("bulk")).toBe(25_000);
    });

    it("lets the last entry of an identifier win within one statement's rows and in the last few", async () => {
      // 250 entries: two full statements of rows and a tail of 50, an identifier named twice in each and across them.
      const entries = Array.from({ length: 250 }, (_, i) => ({ identifier: `Q${i}`, values: { h: `h${i}` }, source: `s${i}` as string | null }));
      entries[10] = { identifier: "Q3", values: { h: "same statement" }, source: null };
      entries[120] = { identifier: "Q150", values: { h: "before" }, source: "early" };
      entries[230] = { identifier: "Q220", values: { h: "tail" }, source: "late" };
      entries[240] = { identifier: "Q5", values: { h: "from the tail" }, source: null };
      await store.snapshotPut("dupes", entries);
      expect(await store.snapshotCount("dupes")).toBe(246);
      const got = await store.snapshotGet("dupes", ["Q3", "Q5", "Q150", "Q220", "Q249"]);
      expect(Object.fromEntries(got)).toEqual({ Q3: { h: "same statement" }, Q5: { h: "from the tail" }, Q150: { h: "h150" }, Q220: { h: "tail" }, Q249: { h: "h249" } });
      const sources = await store.snapshotSources("dupes", ["Q3", "Q150", "Q220", "Q249"]);
      expect(Object.fromEntries(sources)).toEqual({ Q150: "s150", Q220: "late", Q249: "s249" });
    });

    it("clears the sources of a put without any, in full statements and the tail, under its own key alone", async () => {
      const sourced = Array.from({ length: 250 }, (_, i) => ({ identifier: `R${i}`, values: { h: `old${i}` }, source: `s${i}` }));
      await store.snapshotPut("plain", sourced);
      await store.snapshotPut("kept", sourced.slice(0, 3));
      await store.snapshotPut("plain", sourced.map(({ identifier }, i) => ({ identifier, values: { h: `new${i}` } })));
      const ids = ["R0", "R99", "R100", "R249"];
      expect(Object.fromEntries(await store.snapshotGet("plain", ids))).toEqual({ R0: { h: "new0" }, R99: { h: "new99" }, R100: { h: "new100" }, R249: { h: "new249" } });
      expect((await store.snapshotSources("plain", ids)).size).toBe(0);
      expect(Object.fromEntries(await store.snapshotSources("kept", ["R0", "R2"]))).toEqual({ R0: "s0", R2: "s2" });
      expect(await store.snapshotCount("plain")).toBe(250);
    });

    it("keeps identifiers and values that JSON escapes, byte for byte", async () => {
      const entries = awkward.map((text, i) => ({ identifier: text, values: { title: text, n: String(i) } }));
      await store.snapshotPut("odd", entries);
      const texts = await store.snapshotText("odd", awkward);
      for (const e of entries) expect(texts.get(e.identifier)).toBe(JSON.stringify(e.values));
    });

    it("gives every log record back as it was written, usual values or not", async () => {
      const usual: LogRecord = {
        id: "u-1", action: "export", channel_id: "", context: "", field_data: "", identifier: "P1", job_id: "run-9", integration: "conveyor",
        message: '{"file":"a.csv"}', method: "auto", operation: "export", request_id: "", result: "success", sd_user_id: "demo",
        timestamp: "2026-11-21 10:00:00", type: "item", instance: 0, log_level: 1, sd_acct_id: 0,
      };
      const unusual: LogRecord = {
        ...usual, id: "u-2", identifier: awkward.join("|"), channel_id: "ch", context: "ctx", field_data: "fd", method: "manual",
        request_id: "bulk-7", result: "error", sd_user_id: "someone-else", instance: 4, log_level: 1, sd_acct_id: 12, message: awkward.join(""),
      };
      const empty: LogRecord = { ...usual, id: "u-3", identifier: "P3", action: "", integration: "", message: "", operation: "", result: "", type: "" };
      await store.addLogs("demo", [usual, unusual, empty]);
      const page = await store.searchLogs({ account: "demo", run: "run-9" });
      expect(page.logs.map((l) => JSON.stringify(l))).toEqual([empty, unusual, usual].map((l) => JSON.stringify(l)));
      const found = await store.searchLogs({ account: "demo", identifier: [unusual.identifier] });
      expect(found.logs).toEqual([unusual]);
    });

    it("gives way to timers and sockets after each bulk write: a commit's loop of them never holds the event loop", async () => {
      const record: LogRecord = {
        id: "t-1", action: "update", channel_id: "", context: "", field_data: "", identifier: "P1", job_id: "run-turn", integration: "conveyor",
        message: "", method: "auto", operation: "import", request_id: "", result: "success", sd_user_id: "demo",
        timestamp: "2026-11-21 10:00:00", type: "item", instance: 0, log_level: 1, sd_acct_id: 0,
      };
      const writes: Record<string, () => Promise<void>> = {
        snapshotPut: () => store.snapshotPut("turn", [{ identifier: "A", values: { h: "1" } }]),
        snapshotDelete: () => store.snapshotDelete("turn", ["A"]),
        addLogs: () => store.addLogs("demo", [record]),
      };
      for (const [name, write] of Object.entries(writes)) {
        let ran = false;
        setImmediate(() => (ran = true));
        await write();
        expect({ name, ran }).toEqual({ name, ran: true });
      }
    });
  });
}
