/**
 * What a product plan keeps while the scope read is still under way, so that
 * the feed is read and settled meanwhile (issue 28: the scope read overlaps
 * the parse). A diff run's rows that match their snapshot's fingerprint wait
 * in the work database, as JSON lists of identifiers (what its scope lookup
 * takes), until the scope says whether their records are still in the
 * service; pages of rows to plan are held, since planning them needs the
 * scope's values; and so are the identifiers of rows the feed names without
 * planning them, which removal must not take away.
 *
 * The held pages have a limit, so that memory stays flat in rows: past it the
 * planner waits for the scope, as it did before it could plan without it.
 *
 * @module
 */

import { ownCopy } from "../../memory.js";
import type { WorkDb } from "./workdb.js";

/** Rows of pages held for the scope, at most. */
export const MAX_HELD_ROWS = 5_000;

/**
 * Identifiers a waiting list gathers before it is written. Each list is an
 * insert of its own, between the feed's other work: with a list per settled
 * batch, the inserts' own cost was a large part of a big diff run's main
 * thread (the figures are in the commits that set this); two thousand
 * identifiers a list make it small, for some tens of kilobytes of JSON text
 * held. Far longer lists raised a run's peak memory. A test lowers it to
 * write several lists.
 */
export const waitingList = { identifiers: 2_048 };

/** `Row`: a row of the pages the planner holds (its PlannerRow). */
export class ScopeWait<Row> {
  /** Records in scope, once the read is in. */
  size: number | null = null;
  private failure: { error: unknown } | null = null;
  private lists = 0;
  /** The list being gathered: JSON strings, comma-separated, without the brackets. */
  private listText = "";
  private listCount = 0;
  private pages: Row[][] = [];
  private heldRows = 0;
  private names: string[] = [];

  constructor(
    readonly read: Promise<number>,
    private readonly work: WorkDb,
  ) {
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
    return this.lists > 0 || this.listCount > 0 || this.heldRows > 0 || this.names.length > 0;
  }

  /** The held pages are at their limit: the planner must wait for the scope before it takes more. */
  get full(): boolean {
    return this.heldRows >= MAX_HELD_ROWS;
  }

  /** Identifiers whose rows matched their snapshot entries. */
  settle(identifiers: readonly string[]): void {
    if (identifiers.length === 0) return;
    // The JSON text, not the strings: an identifier may be a slice of a large piece of the feed's text.
    const items = JSON.stringify(identifiers).slice(1, -1);
    this.listText = this.listCount === 0 ? items : `${this.listText},${items}`;
    this.listCount += identifiers.length;
    if (this.listCount >= waitingList.identifiers) this.writeList();
  }

  private writeList(): void {
    if (this.listCount === 0) return;
    this.work.addWaiting(`[${this.listText}]`, this.listCount);
    this.lists++;
    this.listText = "";
    this.listCount = 0;
  }

  hold(rows: Row[]): void {
    this.pages.push(rows);
    this.heldRows += rows.length;
  }

  /** A record the feed names but does not plan; copied, since it may be a slice of a large piece of the feed's text. */
  mention(identifier: string): void {
    this.names.push(ownCopy(identifier));
  }

  /** Everything held, in the order it came, and the holds emptied (the lists as they are read). */
  take(): { lists: Iterable<{ list: string; count: number }>; pages: Row[][]; mentioned: string[] } {
    this.writeList();
    const taken = { lists: this.lists > 0 ? this.work.takeWaiting() : [], pages: this.pages, mentioned: this.names };
    this.lists = 0;
    this.pages = [];
    this.heldRows = 0;
    this.names = [];
    return taken;
  }
}
