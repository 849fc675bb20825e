/**
 * What a product plan keeps while the scope read is still under way, so that
 * the feed is read and settled meanwhile (issue 28: the scope read overlaps
 * the parse). A diff run's rows that match their snapshot's fingerprint wait
 * here, as JSON lists of identifiers (what the work database's lookup takes)
 * in buffers outside the JavaScript heap, until the scope says whether their
 * records are still in the service;
 * pages of rows to plan are held, since planning them needs the scope's
 * values; and so are the identifiers of rows the feed names without planning
 * them, which removal must not take away.
 *
 * Both holds have a limit, so that memory stays flat in rows: past it the
 * planner waits for the scope, as it did before it could settle without it.
 *
 * @module
 */

import { ownCopy } from "../../memory.js";
import type { PlannerRow } from "./product-planner.js";

/**
 * Bytes of identifiers settled before the scope is in, at most: a million
 * identifiers of 13 characters. Kept as strings on the heap, they cost twice
 * that in peak RSS.
 */
export const MAX_WAITING_BYTES = 16 << 20;

/** The buffers the lists are written into: large enough that a million identifiers take a few dozen. */
const CHUNK_BYTES = 1 << 20;

/** Where one list lies: its buffer, its bytes, its identifiers. */
interface Span {
  chunk: number;
  start: number;
  end: number;
  count: number;
}

/** Rows of pages held for the scope, at most. */
export const MAX_HELD_ROWS = 5_000;

export class ScopeWait {
  /** Records in scope, once the read is in. */
  size: number | null = null;
  private failure: { error: unknown } | null = null;
  private chunks: Buffer[] = [];
  private spans: Span[] = [];
  /** Bytes written into the last buffer, and into all of them. */
  private used = 0;
  private bytes = 0;
  private pages: PlannerRow[][] = [];
  private heldRows = 0;
  private names: string[] = [];

  constructor(readonly read: Promise<number>) {
    read.then(
      (n) => {
        this.size = n;
      },
      (error: unknown) => {
        this.failure = { error };
      },
    );
  }

  /** Throws the scope read's error once it is known: reading the rest of the feed would be wasted. */
  check(): void {
    if (this.failure) throw this.failure.error;
  }

  /** Something waits for the scope: it must be taken up before the plan goes on. */
  get holding(): boolean {
    return this.spans.length > 0 || this.heldRows > 0 || this.names.length > 0;
  }

  /** A hold is at its limit: the planner must wait for the scope before it takes more. */
  get full(): boolean {
    return this.bytes >= MAX_WAITING_BYTES || this.heldRows >= MAX_HELD_ROWS;
  }

  /** Identifiers whose rows matched their snapshot entries. */
  settle(identifiers: readonly string[]): void {
    if (identifiers.length === 0) return;
    const list = JSON.stringify(identifiers);
    const size = Buffer.byteLength(list);
    let chunk = this.chunks[this.chunks.length - 1];
    if (!chunk || this.used + size > chunk.length) {
      chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, size));
      this.chunks.push(chunk);
      this.used = 0;
    }
    chunk.write(list, this.used);
    this.spans.push({ chunk: this.chunks.length - 1, start: this.used, end: this.used + size, count: identifiers.length });
    this.used += size;
    this.bytes += size;
  }

  hold(rows: PlannerRow[]): void {
    this.pages.push(rows);
    this.heldRows += rows.length;
  }

  /** A record the feed names but does not plan; copied, since it may be a slice of a large piece of the feed's text. */
  mention(identifier: string): void {
    this.names.push(ownCopy(identifier));
  }

  /** Everything held, in the order it came, and the holds emptied. */
  take(): { lists: Iterable<{ list: string; count: number }>; pages: PlannerRow[][]; mentioned: string[] } {
    const taken = { lists: lists(this.chunks, this.spans), pages: this.pages, mentioned: this.names };
    this.chunks = [];
    this.spans = [];
    this.used = 0;
    this.bytes = 0;
    this.pages = [];
    this.heldRows = 0;
    this.names = [];
    return taken;
  }
}

/** Each list as text again, one at a time. */
function* lists(chunks: readonly Buffer[], spans: readonly Span[]): Generator<{ list: string; count: number }> {
  for (const { chunk, start, end, count } of spans) yield { list: chunks[chunk]?.toString("utf8", start, end) ?? "[]", count };
}
