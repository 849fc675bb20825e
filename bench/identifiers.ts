/**
 * The benches' record identifiers. By default they ascend with the rows, the
 * kindest case for every B-tree keyed by them (the work database's scope, the
 * state's snapshot, the service's items), which fills at its end; with
 * `--unordered` they come in no order, as UUIDs do.
 *
 * @module
 */

/** MurmurHash3's finalizer: consecutive numbers to scattered ones. */
function scramble(n: number): number {
  let h = n;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Row `n`'s identifier: `prefix` and `n` in `digits` digits, or, unordered, eight hex digits of a hash of `n` before seven of `n` (still unique). */
export function benchIdentifier(prefix: string, n: number, digits: number, unordered: boolean): string {
  if (!unordered) return `${prefix}${String(n).padStart(digits, "0")}`;
  return `${prefix}${scramble(n).toString(16).padStart(8, "0")}${String(n).padStart(7, "0")}`;
}
