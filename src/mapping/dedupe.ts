/**
 * Duplicate identifiers in a product feed: the last row wins, and the run
 * reports how many rows were merged (automations.md, `identifier`).
 *
 * A `Map<string, number>` over a million identifiers costs about 100 MB of
 * heap; this index keeps a 64-bit hash of each identifier and the index of its
 * latest row in typed arrays instead: 12 bytes a slot at a load of at most
 * one half, so about 24 MB for a million identifiers and no per-entry objects
 * for the garbage collector. Two identifiers sharing both 32-bit hashes would
 * be taken for one (odds near 1 in 10^7 for a 10-million-row feed); the
 * caller that needs certainty compares the identifiers of the two rows it is
 * told about.
 *
 * Streaming use: `note(identifier, index)` as rows arrive returns the index
 * of the earlier row this one replaces (or -1); whatever holds the mapped
 * records (the run's store) drops or overwrites that one.
 */
export class IdentifierIndex {
  private capacity: number;
  private hi: Uint32Array;
  private lo: Uint32Array;
  /** Row index + 1; 0 marks a free slot. */
  private value: Uint32Array;
  private count = 0;
  /** Rows that replaced an earlier row with the same identifier. */
  merged = 0;

  constructor(expected = 1024) {
    this.capacity = 1 << Math.max(4, Math.ceil(Math.log2(Math.max(1, expected) * 2)));
    this.hi = new Uint32Array(this.capacity);
    this.lo = new Uint32Array(this.capacity);
    this.value = new Uint32Array(this.capacity);
  }

  /** Distinct identifiers seen. */
  get size(): number {
    return this.count;
  }

  /** Bytes held by the table, for the run's memory figures. */
  get bytes(): number {
    return this.capacity * 12;
  }

  /** Records `identifier` at row `index` (0 ≤ index < 2^32 − 1); returns the index of the row it replaces, or -1. */
  note(identifier: string, index: number): number {
    hash(identifier);
    const previous = this.put(H1, H2, index + 1);
    if (previous > 0) {
      this.merged++;
      return previous - 1;
    }
    this.count++;
    if (this.count * 2 > this.capacity) this.grow();
    return -1;
  }

  /** The latest row index for `identifier`, or -1. */
  get(identifier: string): number {
    hash(identifier);
    const h1 = H1;
    const h2 = H2;
    const mask = this.capacity - 1;
    for (let slot = h1 & mask; ; slot = (slot + 1) & mask) {
      const v = this.value[slot] ?? 0;
      if (v === 0) return -1;
      if (this.hi[slot] === h1 && this.lo[slot] === h2) return v - 1;
    }
  }

  /** Linear probing; returns the value that was there (0 when the slot was free). */
  private put(h1: number, h2: number, v: number): number {
    const mask = this.capacity - 1;
    for (let slot = h1 & mask; ; slot = (slot + 1) & mask) {
      const old = this.value[slot] ?? 0;
      if (old === 0 || (this.hi[slot] === h1 && this.lo[slot] === h2)) {
        this.hi[slot] = h1;
        this.lo[slot] = h2;
        this.value[slot] = v;
        return old;
      }
    }
  }

  private grow(): void {
    const { hi, lo, value } = this;
    this.capacity *= 2;
    this.hi = new Uint32Array(this.capacity);
    this.lo = new Uint32Array(this.capacity);
    this.value = new Uint32Array(this.capacity);
    for (let i = 0; i < value.length; i++) {
      const v = value[i] ?? 0;
      if (v !== 0) this.put(hi[i] ?? 0, lo[i] ?? 0, v);
    }
  }
}

// The hash is returned through these two so hashing a row allocates nothing.
let H1 = 0;
let H2 = 0;

/** Two independent 32-bit hashes (FNV-1a and a murmur-style mix) over the UTF-16 code units. */
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
  H2 = b >>> 0;
}
