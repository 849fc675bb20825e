/**
 * Does a product feed repeat an identifier? The first `memoryLimit`
 * identifiers are held in an IdentifierSet, where a repeat is found at once.
 * Past that the set stops growing (memory stays the same whatever the feed's
 * size) and the 64-bit hashes of the later identifiers are written to bucket
 * files in the run's work folder, split by their low bits; `finish()` sorts
 * one bucket at a time, in one buffer the size of the largest bucket, and
 * finds a repeat among them. A repeat of an early identifier is still found
 * at once, by the set.
 *
 * A hash collision reads as a repeat; the caller settles repeats exactly (the
 * run reads the feed again through its work database), so it costs time,
 * never correctness.
 *
 * A diff run's source index marks the rows of the identifiers it holds an
 * entry for (RowMarks): from when it is read, those identifiers are noted
 * there and the set keeps only the others (new records, mostly), so a
 * nightly feed no longer fills it.
 *
 * @module
 */

import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import { IdentifierSet, NOT_KEPT, REPEATED } from "../../mapping/index.js";

const BUCKET_BITS = 6;
const BUCKETS = 1 << BUCKET_BITS;
/** Hashes per bucket buffer (8 bytes each): 64 buckets x 16 KB. */
const BUFFERED = 2048;

/** Identifiers held in memory (8 MB); a test lowers it to walk the spill path with a small feed. */
export const repeatMemory = { identifiers: 1 << 19 };

/** Where a diff run's source index notes the identifiers it holds an entry for. */
export interface RowMarks {
  /** Notes a row of `identifier`: whether one came before, or null when the marks cannot tell it from another identifier. */
  noteRow(identifier: string): boolean | null;
  /** `noteRow` by the identifier's own entry, as the caller found it in the marks (-1: none). */
  noteRowAt(entry: number): boolean | null;
}

export class RepeatFinder {
  private readonly memory: IdentifierSet;
  private marks: RowMarks | null = null;
  /** The set held identifiers when the marks came: a marked identifier is also looked for there. */
  private early = false;
  private readonly buffers: Uint32Array[] = [];
  private readonly used = new Uint32Array(BUCKETS);
  /** Hashes written to each bucket's file. */
  private readonly written = new Uint32Array(BUCKETS);
  private readonly fds: Array<number | null> = new Array<number | null>(BUCKETS).fill(null);
  private spilled = 0;

  constructor(
    private readonly folder: string,
    memoryLimit = repeatMemory.identifiers,
  ) {
    this.memory = new IdentifierSet(Math.min(1 << 16, memoryLimit), memoryLimit);
  }

  /** Identifiers written to the bucket files so far. */
  get spilledCount(): number {
    return this.spilled;
  }

  /**
   * From now on an identifier `marks` can tell apart is noted there. Not
   * once identifiers went to the bucket files: a marked one could not be
   * looked for among them.
   */
  useMarks(marks: RowMarks): void {
    if (this.spilled > 0 || this.marks !== null) return;
    this.marks = marks;
    this.early = this.memory.size > 0;
  }

  /**
   * True when `identifier` certainly (up to a hash collision) came before;
   * false may still be found out by `finish()`. `entry`: the identifier's own
   * entry in the marks, when the caller found it there already.
   */
  note(identifier: string, entry?: number): boolean {
    const { marks } = this;
    const marked = marks === null ? null : entry === undefined ? marks.noteRow(identifier) : marks.noteRowAt(entry);
    if (marked !== null) return marked || (this.early && this.memory.has(identifier));
    const result = this.memory.add(identifier);
    if (result === REPEATED) return true;
    if (result === NOT_KEPT) this.spill(this.memory.lastHi, this.memory.lastLo);
    return false;
  }

  private spill(hi: number, lo: number): void {
    const bucket = lo & (BUCKETS - 1);
    let buffer = this.buffers[bucket];
    if (!buffer) {
      buffer = new Uint32Array(BUFFERED * 2);
      this.buffers[bucket] = buffer;
    }
    const at = this.used[bucket] ?? 0;
    // Little-endian words, low first: read back as one 64-bit integer.
    buffer[at * 2] = lo;
    buffer[at * 2 + 1] = hi;
    this.used[bucket] = at + 1;
    this.spilled++;
    if (at + 1 === BUFFERED) this.writeOut(bucket);
  }

  private writeOut(bucket: number): void {
    const buffer = this.buffers[bucket];
    const count = this.used[bucket] ?? 0;
    if (!buffer || count === 0) return;
    let fd = this.fds[bucket] ?? null;
    if (fd === null) {
      mkdirSync(this.folder, { recursive: true });
      fd = openSync(this.bucketPath(bucket), "w+");
      this.fds[bucket] = fd;
    }
    writeSync(fd, buffer, 0, count * 8);
    this.used[bucket] = 0;
    this.written[bucket] = (this.written[bucket] ?? 0) + count;
  }

  private bucketPath(bucket: number): string {
    return path.join(this.folder, `hashes-${bucket}.bin`);
  }

  /** True when the spilled identifiers repeat one. Removes the bucket files; the finder is spent. */
  finish(): boolean {
    this.marks = null;
    try {
      for (let bucket = 0; bucket < BUCKETS; bucket++) this.writeOut(bucket);
      // One buffer for every bucket: a buffer each, made in one synchronous loop, stayed allocated until a
      // collection, and their size grows with the feed.
      const scratch = new BigUint64Array(Math.max(0, ...this.written));
      for (let bucket = 0; bucket < BUCKETS; bucket++) {
        const fd = this.fds[bucket];
        if (fd === null || fd === undefined) continue;
        this.fds[bucket] = null;
        if (bucketRepeats(fd, scratch.subarray(0, this.written[bucket]))) return true;
      }
      return false;
    } finally {
      this.close();
    }
  }

  /** Closes and removes the bucket files (also after a failed run), and lets the marks go. */
  close(): void {
    this.marks = null;
    for (const [bucket, fd] of this.fds.entries()) {
      if (fd !== null) closeSync(fd);
      this.fds[bucket] = null;
    }
    this.buffers.length = 0;
    rmSync(this.folder, { recursive: true, force: true });
  }
}

/** One bucket's hashes, read from its file (closed here) into `hashes` and sorted: a repeat sits next to its twin. */
function bucketRepeats(fd: number, hashes: BigUint64Array): boolean {
  try {
    let at = 0;
    while (at < hashes.byteLength) {
      const bytes = readSync(fd, hashes, at, hashes.byteLength - at, at);
      if (bytes === 0) break;
      at += bytes;
    }
    hashes.sort();
    // Compared as 32-bit words: reading a BigUint64Array makes a BigInt per element.
    const words = new Uint32Array(hashes.buffer, hashes.byteOffset, hashes.length * 2);
    for (let i = 2; i < words.length; i += 2) if (words[i] === words[i - 2] && words[i + 1] === words[i - 1]) return true;
    return false;
  } finally {
    closeSync(fd);
  }
}
