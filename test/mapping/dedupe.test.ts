import { describe, expect, it } from "vitest";
import { ADDED, IdentifierSet, NOT_KEPT, REPEATED } from "../../src/mapping/index.js";

describe("IdentifierSet", () => {
  it("tells a repeated identifier from a new one", () => {
    const set = new IdentifierSet(4);
    expect(["A", "B", "A", "C", "A", "B"].map((id) => set.add(id))).toEqual([ADDED, ADDED, REPEATED, ADDED, REPEATED, REPEATED]);
    expect(set.size).toBe(3);
    expect(set.has("A")).toBe(true);
    expect(set.has("Z")).toBe(false);
  });

  it("tells apart identifiers that differ only by leading zeros or case", () => {
    const set = new IdentifierSet();
    for (const id of ["0700", "700", "713752E1", "713752e1", ""]) expect(set.add(id)).toBe(ADDED);
  });

  it("agrees with a Set over 300,000 identifiers while growing, in a fraction of the memory", () => {
    const set = new IdentifierSet(16);
    const reference = new Set<string>();
    for (let i = 0; i < 300_000; i++) {
      const id = `SKU-${(i * 7919) % 200_000}`;
      expect(set.add(id)).toBe(reference.has(id) ? REPEATED : ADDED);
      reference.add(id);
    }
    expect(set.size).toBe(reference.size);
    expect(set.bytes).toBeLessThanOrEqual(200_000 * 4 * 8);
  });

  it("stops growing at its limit: it still finds what it holds, and hands back the hash of what it cannot keep", () => {
    const set = new IdentifierSet(16, 1000);
    for (let i = 0; i < 1000; i++) expect(set.add(`K${i}`)).toBe(ADDED);
    const bytes = set.bytes;
    expect(set.add("K1000")).toBe(NOT_KEPT);
    const [hi, lo] = [set.lastHi, set.lastLo];
    expect(set.add("K1000")).toBe(NOT_KEPT);
    expect([set.lastHi, set.lastLo]).toEqual([hi, lo]);
    expect(set.add("K999")).toBe(REPEATED);
    for (let i = 1001; i < 50_000; i++) set.add(`K${i}`);
    expect(set.size).toBe(1000);
    expect(set.bytes).toBe(bytes);
  });
});
