/**
 * A diff run's copy of its snapshot's source fingerprints (issue 28), read in
 * one sequential pass over the snapshot while the files download, so that
 * settling a batch of rows asks the store nothing.
 *
 * It holds no strings: an open-addressing table in one typed array, each
 * slot three words side by side (a lookup touches one cache line, where a
 * table per part cost a cache miss per part): a 32-bit hash of the
 * identifier, the index of the fingerprint's definition part with 24 bits of
 * its row hash, and 30 more bits of the row hash. A false "equal" would need
 * 54 bits of the row hashes to agree as well, and the row hash covers the
 * identifier's own cell; identifiers that share a hash in the table are
 * answered by the store.
 *
 * @module
 */

import type { StateStore } from "../../state/index.js";
import { DEFINITION_CHARS } from "./source-fingerprint.js";

/** What the index knows of one identifier's snapshot entry against a row's fingerprint. */
export const SOURCE = { none: 0, current: 1, equal: 2, unknown: 3 } as const;
export type SourceMatch = (typeof SOURCE)[keyof typeof SOURCE];

/** Slot markers besides definition indexes 1..MAX_DEFINITIONS, in the top byte of a slot's second word. */
const EMPTY = 0;
const NO_SOURCE = 254;
const AMBIGUOUS = 255;
const MAX_DEFINITIONS = 253;

/** Slots per entry: a table a fifth empty keeps probes short without doubling its size. */
const LOAD = 0.8;

/** Words per slot: the identifier's hash; the kind and the row hash's high bits; its low bits. */
const WORDS = 3;
const KIND_SHIFT = 24;
const HIGH_MASK = 0xff_ffff;

/**
 * Entries read at most. The table costs about 15 bytes an entry (the read
 * holds 12 more until the table is built), so a snapshot of any size holds
 * it to some 16 MB and a run's peak memory stays flat in rows; past this many, the identifiers it did not read are looked
 * up in the store, batch by batch, as they were before the index.
 */
export const MAX_ENTRIES = 1 << 20;

/** Base64url characters of the row hash read into a slot: 24 bits beside the kind, then 30. */
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

/** FNV-1a over the UTF-16 code units. */
function hashId(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
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

/**
 * Entries per block of the read, which holds them until it knows how many
 * there are. A block stays under the C library's threshold for mapping an
 * allocation of its own: freeing a mapped one raises that threshold for the
 * rest of the process.
 */
const BLOCK = 1 << 13;

export class SourceIndex {
  private slots: Uint32Array<ArrayBuffer> = new Uint32Array(0);
  private capacity = 0;
  private readonly definitions = new Map<string, number>();
  private lastDefinition = "\u0000";
  private lastIndex: number | undefined = undefined;
  /** False when the read was cut short: then the store answers every lookup. */
  private complete = true;
  /** True when the snapshot holds more than MAX_ENTRIES: an identifier not in the table may still be in the store. */
  private partial = false;

  private constructor() {}

  /**
   * Reads the entries of `key`, at most `limit` (the rest are left to the
   * store); `stopped` ends the read early (the index is then incomplete, and
   * not used).
   */
  static load(store: StateStore, key: string, stopped: () => boolean, limit = MAX_ENTRIES): Promise<SourceIndex> {
    return SourceIndex.fromPages(store.snapshotSourcePages(key), stopped, limit);
  }

  /**
   * The index of a snapshot's pages of identifiers and fingerprints, in
   * identifier order. Without `count`, the entries are kept as their slot
   * words in blocks and the table is sized from their number (a count read
   * every page of the snapshot a second time on the run's thread). With it
   * (source-index-thread.ts counts on a thread of its own), the table is
   * filled as the pages come, and more entries than counted leave the index
   * incomplete.
   */
  static async fromPages(pages: AsyncIterable<SourcePage> | Iterable<SourcePage>, stopped: () => boolean, limit = MAX_ENTRIES, count?: number): Promise<SourceIndex> {
    const index = new SourceIndex();
    const blocks: Uint32Array[] = [];
    const entry = new Uint32Array(WORDS);
    if (count !== undefined) index.size(Math.min(count, limit));
    let seen = 0;
    for await (const page of pages) {
      if (stopped() || (count !== undefined && seen + Math.min(page.length, limit - seen) > count)) {
        index.complete = false;
        break;
      }
      if (seen + page.length > limit) index.partial = true;
      for (let i = 0; i < page.length && seen < limit; i++, seen++) {
        const [id, source] = page[i] as [string, string | null];
        if (count !== undefined) {
          index.entryWords(id, source, entry, 0);
          index.place(entry, 0);
          continue;
        }
        const at = (seen % BLOCK) * WORDS;
        if (at === 0) blocks.push(new Uint32Array(BLOCK * WORDS));
        index.entryWords(id, source, blocks[blocks.length - 1] as Uint32Array, at);
      }
      if (index.partial) break;
    }
    if (index.complete && count === undefined) {
      index.size(seen);
      for (let n = 0; n < seen; n++) index.place(blocks[Math.floor(n / BLOCK)] as Uint32Array, (n % BLOCK) * WORDS);
    }
    return index;
  }

  parts(): SourceIndexParts {
    return { slots: this.slots, capacity: this.capacity, definitions: [...this.definitions], complete: this.complete, partial: this.partial };
  }

  static fromParts(parts: SourceIndexParts): SourceIndex {
    const index = new SourceIndex();
    index.slots = parts.slots;
    index.capacity = parts.capacity;
    for (const [definition, n] of parts.definitions) index.definitions.set(definition, n);
    index.complete = parts.complete;
    index.partial = parts.partial;
    return index;
  }

  private size(entries: number): void {
    this.capacity = Math.max(16, Math.ceil(entries / LOAD) + 1);
    this.slots = new Uint32Array(this.capacity * WORDS);
  }

  /** Puts an entry's slot words, `words` from `from`, in the table; a second entry of its hash makes the slot ambiguous. */
  private place(words: Uint32Array, from: number): void {
    const hash = words[from] ?? 0;
    const at = this.slot(hash);
    if (this.slots[at + 1] !== EMPTY) {
      this.slots[at + 1] = AMBIGUOUS << KIND_SHIFT;
      return;
    }
    this.slots[at] = hash;
    this.slots[at + 1] = words[from + 1] ?? EMPTY;
    this.slots[at + 2] = words[from + 2] ?? 0;
  }

  /** The first word of the slot of `hash`: its own, or the empty one where it would go. */
  private slot(hash: number): number {
    const { slots } = this;
    const end = this.capacity * WORDS;
    let at = Math.floor((hash / 0x1_0000_0000) * this.capacity) * WORDS;
    while (slots[at + 1] !== EMPTY && slots[at] !== hash) at = at + WORDS === end ? 0 : at + WORDS;
    return at;
  }

  /** An entry's three slot words, written into `out` at `at`: its identifier's hash, then what its fingerprint is. */
  private entryWords(id: string, source: string | null, out: Uint32Array, at: number): void {
    out[at] = hashId(id);
    out[at + 2] = 0;
    if (source === null) {
      out[at + 1] = NO_SOURCE << KIND_SHIFT;
      return;
    }
    const high = source.length === FINGERPRINT_CHARS ? bits(source, DEFINITION_CHARS, HIGH_CHARS) : -1;
    const low = high < 0 ? -1 : bits(source, DEFINITION_CHARS + HIGH_CHARS, LOW_CHARS);
    const definition = this.definitionIndex(source.slice(0, DEFINITION_CHARS), true);
    // A fingerprint of another shape (an older scheme) is compared by the store.
    if (low < 0 || definition === undefined) {
      out[at + 1] = AMBIGUOUS << KIND_SHIFT;
      return;
    }
    out[at + 1] = (definition << KIND_SHIFT) | high;
    out[at + 2] = low;
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
    if (!this.complete) return SOURCE.unknown;
    const at = this.slot(hashId(id));
    const word = this.slots[at + 1] ?? EMPTY;
    const kind = word >>> KIND_SHIFT;
    if (kind === EMPTY) return this.partial ? SOURCE.unknown : SOURCE.none;
    if (kind === NO_SOURCE) return SOURCE.none;
    if (kind === AMBIGUOUS) return SOURCE.unknown;
    if (kind !== this.definitionOf(fingerprint)) return SOURCE.none;
    const equal = (word & HIGH_MASK) === bits(fingerprint, DEFINITION_CHARS, HIGH_CHARS) && this.slots[at + 2] === bits(fingerprint, DEFINITION_CHARS + HIGH_CHARS, LOW_CHARS);
    return equal ? SOURCE.equal : SOURCE.current;
  }
}
