import { describe, expect, it } from "vitest";
import { IdentifierIndex } from "../../src/mapping/index.js";

describe("IdentifierIndex", () => {
  it("returns the row a duplicate replaces and counts merged rows", () => {
    const index = new IdentifierIndex(4);
    expect(["A", "B", "A", "C", "A", "B"].map((id, i) => index.note(id, i))).toEqual([-1, -1, 0, -1, 2, 1]);
    expect(index.merged).toBe(3);
    expect(index.size).toBe(3);
    expect(index.get("A")).toBe(4);
    expect(index.get("Z")).toBe(-1);
  });

  it("tells apart identifiers that differ only by leading zeros or case", () => {
    const index = new IdentifierIndex();
    for (const [i, id] of ["0700", "700", "713752E1", "713752e1", ""].entries()) expect(index.note(id, i)).toBe(-1);
    expect(index.merged).toBe(0);
  });

  it("agrees with a Map over 300,000 identifiers while growing, in a fraction of the memory", () => {
    const index = new IdentifierIndex(16);
    const reference = new Map<string, number>();
    let merged = 0;
    for (let i = 0; i < 300_000; i++) {
      const id = `SKU-${(i * 7919) % 200_000}`;
      const previous = reference.get(id);
      if (previous !== undefined) merged++;
      expect(index.note(id, i)).toBe(previous ?? -1);
      reference.set(id, i);
    }
    expect(index.merged).toBe(merged);
    expect(index.size).toBe(reference.size);
    expect(index.bytes).toBeLessThanOrEqual(200_000 * 4 * 12);
  });
});
