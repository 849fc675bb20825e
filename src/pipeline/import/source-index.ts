/**
 * A diff run's copy of its snapshot's source fingerprints (issue 28), read in
 * one sequential pass over the snapshot while the files download, so that
 * settling a batch of rows asks the store nothing.
 *
 * It holds no strings: an open-addressing table in one typed array, each
 * slot four words side by side (a lookup touches one cache line, where a
 * table per part cost a cache miss per part): a 32-bit hash of the
 * identifier, the index of the fingerprint's definition part with 24 bits of
 * its row hash, 30 more bits of the row hash with two marks, and a second
 * 32-bit hash of the identifier. A false "equal" would need 54 bits of the
 * row hashes to agree as well, and the row hash covers the identifier's own
 * cell; identifiers that share a hash in the table are answered by the store.
 *
 * The marks answer what a diff run asks of nearly every row once it is
 * settled: is its record still in scope (the service's export, marked here
 * as it streams into the work database), and was it mentioned (removal).
 * A scope identifier marks a slot only when both its hashes are the slot's.
 * In the work database each question was a lookup in a B-tree on disk,
 * slowest where the feed's identifiers come in no order, as UUIDs do.
 *
 * @module
 */

import type { StateStore } from "../../state/index.js";
import { DEFINITION_CHARS } from "./source-fingerprint.js";

/** What the index knows of one identifier's snapshot entry against a row's fingerprint. */
export const SOURCE = { none: 0, current: 1, equal: 2, unknown: 3 } as const;
export type SourceMatch = (typeof SOURCE)[keyof typeof SOURCE];

/** What the marks say of an identifier's record: the scope holds it, does not, or the table cannot tell (ask the work database). */
export const SCOPE = { out: 0, in: 1, unknown: 2 } as const;
export type ScopeState = (typeof SCOPE)[keyof typeof SCOPE];

/** Slot markers besides definition indexes 1..MAX_DEFINITIONS, in the top byte of a slot's second word. */
const EMPTY = 0;
const NO_SOURCE = 254;
const AMBIGUOUS = 255;
const MAX_DEFINITIONS = 253;

/** Slots per entry: a table a fifth empty keeps probes short without doubling its size. */
const LOAD = 0.8;

/** Words per slot: the identifier's hash; the kind, a mark and the row hash's high bits; its low bits and the marks; the second hash. */
const WORDS = 4;
const KIND_SHIFT = 24;
const HIGH_MASK = 0x7f_ffff;
/** Mark in the second word: the feed had a row of the entry's identifier (repeats.ts). */
const ROW_SEEN = 0x80_0000;
const LOW_MASK = 0x3fff_ffff;
/** Marks in the third word: the scope holds the identifier; the feed mentioned it (removal). */
const IN_SCOPE = 0x4000_0000;
const MENTIONED = 0x8000_0000;

/**
 * Entries read at most. The table costs about 20 bytes an entry, so a
 * snapshot of any size holds it to some 21 MB and a run's peak memory stays
 * flat in rows; past this many, the identifiers it did not read are looked
 * up in the store, batch by batch, as they were before the index.
 */
export const MAX_ENTRIES = 1 << 20;

/** Base64url characters of the row hash read into a slot: 24 bits (23 kept) beside the kind, then 30. */
const HIGH_CHARS = 4;
const LOW_CHARS = 5;
/** The definition's part, then the row's SHA-1 in base64url. */
const FINGERPRINT_CHARS = DEFINITION_CHARS + 27;

const DIGITS = new Int8Array(128).fill(-1);
for (const [i, c] of [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"].entries()) DIGITS[c.charCodeAt(0)] = i;

/** `chars` base64url characters from `at` as a number (6 bits each, at most 30), or -1 when the text is not base64url there. */
function bits(text: string, at: number, chars: number): number {
  let out = 0;
  for (let i = at; i < at + chars; i++) {
    const code = text.charCodeAt(i);
    const digit = code < 128 ? (DIGITS[code] ?? -1) : -1;
    if (digit < 0) return -1;
    out = out * 64 + digit;
  }
  return out;
}

/** The second hash of the identifier last hashed by `hashId`. */
let secondHash = 0;

/**
 * FNV-1a over the UTF-16 code units, the table's key; and, in the same loop,
 * a second hash with another multiplier and shift (in `secondHash`), so that
 * two identifiers agree on both with a chance of about one in 2^64.
 */
function hashId(id: string): number {
  let h = 0x811c9dc5;
  let g = 0x9747b28c;
  for (let i = 0; i < id.length; i++) {
    const code = id.charCodeAt(i);
    h = Math.imul(h ^ code, 0x01000193);
    g = Math.imul(g ^ code, 0x5bd1e995);
    g ^= g >>> 15;
  }
  g = Math.imul(g ^ (g >>> 13), 0xc2b2ae35);
  secondHash = (g ^ (g >>> 16)) >>> 0;
  return h >>> 0;
}

/** The same answer from a snapshot entry's fingerprint as the store gives it (undefined: no entry, or one without a fingerprint). */
export function sourceMatch(stored: string | undefined, fingerprint: string): SourceMatch {
  if (stored === undefined || !stored.startsWith(fingerprint.slice(0, DEFINITION_CHARS))) return SOURCE.none;
  return stored === fingerprint ? SOURCE.equal : SOURCE.current;
}

/** A page of a snapshot's identifiers and source fingerprints (null for an entry without one). */
export type SourcePage = ReadonlyArray<readonly [string, string | null]>;

/** An index as a thread sends it: the table's buffer is moved, not copied. */
export interface SourceIndexParts {
  slots: Uint32Array<ArrayBuffer>;
  capacity: number;
  definitions: Array<[string, number]>;
  complete: boolean;
  partial: boolean;
}

export class SourceIndex {
  private readonly definitions = new Map<string, number>();
  private lastDefinition = "\u0000";
  private lastIndex: number | undefined = undefined;
  /** False when the read was cut short or met more entries than counted: then the store answers every lookup. */
  private complete = true;
  /** True when the snapshot holds more than MAX_ENTRIES: an identifier not in the table may still be in the store. */
  private partial = false;
  /** The slot `match` last found for its identifier (SOURCE.current or equal), for `inScopeAt`; -1 when there was none. */
  lastSlot = -1;
  /** That slot when it is the identifier's own entry, both hashes agreeing (`noteRowAt`); -1 otherwise. */
  lastOwn = -1;

  private constructor(
    private readonly capacity: number,
    private readonly slots: Uint32Array<ArrayBuffer> = new Uint32Array(capacity * WORDS),
  ) {}

  /**
   * Reads the entries of `key`, at most `limit` (the rest are left to the
   * store); `stopped` ends the read early (the index is then incomplete, and
   * not used). The count sizes the table; on PostgreSQL the server counts.
   */
  static async load(store: StateStore, key: string, stopped: () => boolean, limit = MAX_ENTRIES): Promise<SourceIndex> {
    const count = await store.snapshotCount(key);
    return SourceIndex.fromPages(store.snapshotSourcePages(key), count, stopped, limit);
  }

  /**
   * The index of a snapshot's pages of identifiers and fingerprints, in
   * identifier order, in a table sized for `count` entries (at most
   * `limit`). More entries than counted would overfill the table: the index
   * then gives way to the store.
   */
  static async fromPages(pages: AsyncIterable<SourcePage> | Iterable<SourcePage>, count: number, stopped: () => boolean, limit = MAX_ENTRIES): Promise<SourceIndex> {
    const index = new SourceIndex(Math.max(16, Math.ceil(Math.min(count, limit) / LOAD) + 1));
    index.partial = count > limit;
    let seen = 0;
    for await (const page of pages) {
      if (stopped() || seen + page.length > count) {
        index.complete = false;
        break;
      }
      const room = limit - seen;
      for (const [id, source] of page.length > room ? page.slice(0, room) : page) index.add(id, source);
      seen += page.length;
      if (seen >= limit && index.partial) break;
    }
    return index;
  }

  /** What a thread sends of the index it read (source-index-thread.ts). */
  parts(): SourceIndexParts {
    return { slots: this.slots, capacity: this.capacity, definitions: [...this.definitions], complete: this.complete, partial: this.partial };
  }

  static fromParts(parts: SourceIndexParts): SourceIndex {
    const index = new SourceIndex(parts.capacity, parts.slots);
    for (const [definition, n] of parts.definitions) index.definitions.set(definition, n);
    index.complete = parts.complete;
    index.partial = parts.partial;
    return index;
  }

  /** The first word of the slot of `hash`: its own, or the empty one where it would go. */
  private slot(hash: number): number {
    const { slots } = this;
    const end = this.capacity * WORDS;
    let at = Math.floor((hash / 0x1_0000_0000) * this.capacity) * WORDS;
    while (slots[at + 1] !== EMPTY && slots[at] !== hash) at = at + WORDS === end ? 0 : at + WORDS;
    return at;
  }

  private add(id: string, source: string | null): void {
    const hash = hashId(id);
    const at = this.slot(hash);
    if (this.slots[at + 1] !== EMPTY) {
      this.slots[at + 1] = AMBIGUOUS << KIND_SHIFT;
      return;
    }
    this.slots[at] = hash;
    this.slots[at + 3] = secondHash;
    this.fill(at, source);
  }

  private fill(at: number, source: string | null): void {
    const { slots } = this;
    if (source === null) {
      slots[at + 1] = NO_SOURCE << KIND_SHIFT;
      return;
    }
    const high = source.length === FINGERPRINT_CHARS ? bits(source, DEFINITION_CHARS, HIGH_CHARS) : -1;
    const low = high < 0 ? -1 : bits(source, DEFINITION_CHARS + HIGH_CHARS, LOW_CHARS);
    const definition = this.definitionIndex(source.slice(0, DEFINITION_CHARS), true);
    // A fingerprint of another shape (an older scheme) is compared by the store.
    if (low < 0 || definition === undefined) {
      slots[at + 1] = AMBIGUOUS << KIND_SHIFT;
      return;
    }
    slots[at + 1] = (definition << KIND_SHIFT) | (high & HIGH_MASK);
    slots[at + 2] = low;
  }

  /** The index of a row fingerprint's definition part; the last one is kept, as a file's rows share one or two. */
  private definitionOf(fingerprint: string): number | undefined {
    if (this.lastDefinition.length !== DEFINITION_CHARS || !fingerprint.startsWith(this.lastDefinition)) {
      this.lastDefinition = fingerprint.slice(0, DEFINITION_CHARS);
      this.lastIndex = this.definitionIndex(this.lastDefinition, false);
    }
    return this.lastIndex;
  }

  private definitionIndex(definition: string, add: boolean): number | undefined {
    const known = this.definitions.get(definition);
    if (known !== undefined || !add || this.definitions.size >= MAX_DEFINITIONS) return known;
    const index = this.definitions.size + 1;
    this.definitions.set(definition, index);
    return index;
  }

  /** `fingerprint` is a row's, made by sourceFingerprints: its definition part is compared with the entry's. */
  match(id: string, fingerprint: string): SourceMatch {
    this.lastSlot = -1;
    this.lastOwn = -1;
    if (!this.complete) return SOURCE.unknown;
    const at = this.slot(hashId(id));
    const word = this.slots[at + 1] ?? EMPTY;
    const kind = word >>> KIND_SHIFT;
    if (kind === EMPTY) return this.partial ? SOURCE.unknown : SOURCE.none;
    if (kind === NO_SOURCE) return SOURCE.none;
    if (kind === AMBIGUOUS) return SOURCE.unknown;
    if (kind !== this.definitionOf(fingerprint)) return SOURCE.none;
    const equal = (word & HIGH_MASK) === (bits(fingerprint, DEFINITION_CHARS, HIGH_CHARS) & HIGH_MASK) && ((this.slots[at + 2] ?? 0) & LOW_MASK) === bits(fingerprint, DEFINITION_CHARS + HIGH_CHARS, LOW_CHARS);
    this.lastSlot = at;
    this.lastOwn = this.slots[at + 3] === secondHash ? at : -1;
    return equal ? SOURCE.equal : SOURCE.current;
  }

  /** The slot of `id`'s own entry, both hashes agreeing; -1 when the table has none (or cannot tell it from another). */
  private own(id: string): number {
    if (!this.complete) return -1;
    const at = this.slot(hashId(id));
    const kind = (this.slots[at + 1] ?? EMPTY) >>> KIND_SHIFT;
    return kind === EMPTY || kind === AMBIGUOUS || this.slots[at + 3] !== secondHash ? -1 : at;
  }

  /** Entry numbers (a slot's first word ÷ WORDS) run from 0 to this. */
  get entries(): number {
    return this.capacity;
  }

  /** Whether the table holds the whole snapshot: read to its end, not cut at MAX_ENTRIES. */
  get whole(): boolean {
    return this.complete && !this.partial;
  }

  /** A scope record's identifier: a row settled against its entry is in scope. True when the table has an entry of its own for it. */
  markScope(id: string): boolean {
    const at = this.own(id);
    if (at < 0) return false;
    this.slots[at + 2] = (this.slots[at + 2] ?? 0) | IN_SCOPE;
    return true;
  }

  /** `markScope`, giving the entry's number when this is its first scope record, and -1 otherwise. */
  claimScope(id: string): number {
    const at = this.own(id);
    if (at < 0) return -1;
    const word = this.slots[at + 2] ?? 0;
    if ((word & IN_SCOPE) !== 0) return -1;
    this.slots[at + 2] = word | IN_SCOPE;
    return at / WORDS;
  }

  /** The entry number of `id` when `markScope` marked it by an entry of its own; -1 otherwise. */
  scopeEntry(id: string): number {
    const at = this.own(id);
    return at >= 0 && ((this.slots[at + 2] ?? 0) & IN_SCOPE) !== 0 ? at / WORDS : -1;
  }

  /** Notes that the feed has a row of `id`: whether it had one before, or null when the table has no entry of its own for it. */
  noteRow(id: string): boolean | null {
    return this.noteRowAt(this.own(id));
  }

  /**
   * `noteRow` by the slot of the identifier's own entry, as `match` left it
   * in `lastOwn`: a settled row's identifier is not hashed and looked up a
   * second time. Null for -1.
   */
  noteRowAt(at: number): boolean | null {
    if (at < 0) return null;
    const word = this.slots[at + 1] ?? 0;
    if ((word & ROW_SEEN) !== 0) return true;
    this.slots[at + 1] = word | ROW_SEEN;
    return false;
  }

  /**
   * Whether the scope holds the record of the entry at `slot` (a `lastSlot`),
   * once every scope identifier was given to `markScope`; with `mention`,
   * the entry is noted as mentioned by the feed.
   */
  inScopeAt(slot: number, mention: boolean): boolean {
    const word = this.slots[slot + 2] ?? 0;
    if ((word & IN_SCOPE) === 0) return false;
    if (mention) this.slots[slot + 2] = word | MENTIONED;
    return true;
  }

  /** `inScopeAt` for an identifier: unknown when the table has no entry of its own for it. */
  scopeOf(id: string, mention: boolean): ScopeState {
    const at = this.own(id);
    if (at < 0) return SCOPE.unknown;
    return this.inScopeAt(at, mention) ? SCOPE.in : SCOPE.out;
  }

  /** Whether `inScopeAt` noted `id` as mentioned. */
  mentioned(id: string): boolean {
    const at = this.own(id);
    return at >= 0 && ((this.slots[at + 2] ?? 0) & MENTIONED) !== 0;
  }
}
