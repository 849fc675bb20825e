/**
 * Duplicate identifiers in a product feed: the last row wins, and a feed that
 * repeats one is planned again as a whole (automations.md, `identifier`).
 *
 * A `Set<string>` over a million identifiers costs about 100 MB of heap; this
 * set keeps a 64-bit hash of each identifier in typed arrays instead: 8 bytes
 * a slot at a load of at most one half, so 16 MB for a million identifiers
 * and no per-entry objects for the garbage collector. Two identifiers sharing
 * both 32-bit hashes would be taken for one (odds near 1 in 10^7 for a
 * 10-million-row feed); the caller that needs certainty settles a repeat
 * exactly.
 *
 * The set stops growing at `limit` identifiers, so a feed of any size holds
 * it to a fixed size: past the limit `add` still finds the identifiers it
 * holds, and leaves the hash of a new one in `lastHi`/`lastLo` for the caller
 * to keep elsewhere (the run spills them to files).
 */
export const ADDED = 0;
export const REPEATED = 1;
/** New, but the set is full: not kept. */
export const NOT_KEPT = 2;
export type AddResult = typeof ADDED | typeof REPEATED | typeof NOT_KEPT;

export class IdentifierSet {
  private capacity: number;
  private hi: Uint32Array;
  private lo: Uint32Array;
  private count = 0;
  /** The hash of the identifier last passed to `add`. */
  lastHi = 0;
  lastLo = 0;

  constructor(
    expected = 1024,
    private readonly limit = Number.POSITIVE_INFINITY,
  ) {
    this.capacity = slotsFor(Math.min(expected, limit));
    this.hi = new Uint32Array(this.capacity);
    this.lo = new Uint32Array(this.capacity);
  }

  /** Distinct identifiers held. */
  get size(): number {
    return this.count;
  }

  /** Bytes held by the table: fixed once the set is full. */
  get bytes(): number {
    return this.capacity * 8;
  }

  add(identifier: string): AddResult {
    hash(identifier);
    this.lastHi = H1;
    this.lastLo = H2;
    const slot = this.find(H1, H2);
    if (this.lo[slot] !== 0 || this.hi[slot] !== 0) return REPEATED;
    if (this.count >= this.limit) return NOT_KEPT;
    this.hi[slot] = H1;
    this.lo[slot] = H2;
    this.count++;
    if (this.count * 2 > this.capacity) this.grow();
    return ADDED;
  }

  has(identifier: string): boolean {
    hash(identifier);
    const slot = this.find(H1, H2);
    return this.lo[slot] !== 0 || this.hi[slot] !== 0;
  }

  /** Linear probing: the slot holding this hash, or the free slot where it would go. */
  private find(h1: number, h2: number): number {
    const mask = this.capacity - 1;
    for (let slot = h1 & mask; ; slot = (slot + 1) & mask) {
      const a = this.hi[slot] ?? 0;
      const b = this.lo[slot] ?? 0;
      if ((a === 0 && b === 0) || (a === h1 && b === h2)) return slot;
    }
  }

  private grow(): void {
    const { hi, lo } = this;
    this.capacity *= 2;
    this.hi = new Uint32Array(this.capacity);
    this.lo = new Uint32Array(this.capacity);
    for (let i = 0; i < hi.length; i++) {
      const a = hi[i] ?? 0;
      const b = lo[i] ?? 0;
      if (a === 0 && b === 0) continue;
      const slot = this.find(a, b);
      this.hi[slot] = a;
      this.lo[slot] = b;
    }
  }
}

/** A power of two holding `n` at a load of at most one half. */
function slotsFor(n: number): number {
  return 1 << Math.max(4, Math.ceil(Math.log2(Math.max(1, n) * 2)));
}

// The hash is returned through these two so hashing a row allocates nothing.
let H1 = 0;
let H2 = 0;

/**
 * Two independent 32-bit hashes (FNV-1a and a murmur-style mix) over the
 * UTF-16 code units. The pair (0, 0) marks a free slot, so the second hash is
 * never 0.
 */
function hash(text: string): void {
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  b = Math.imul(b ^ (b >>> 13), 0xc2b2ae35);
  b ^= b >>> 16;
  H1 = a >>> 0;
  H2 = b >>> 0 || 1;
}
