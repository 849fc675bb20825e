/**
 * Step 6 of a product import, a page of mapped records at a time as the feed
 * streams past: match each with the scope (the work database) and the
 * snapshot (diff runs), apply service actions, plan, and hand the operation
 * to the writer of plan.csv and the bulk files. Row errors and skip logs of the plan wait
 * in the work database until the plan is known to stand (a feed that repeats
 * an identifier is planned again), as do the values the snapshot takes.
 *
 * @module
 */

import type { SourceRow } from "../../formats/index.js";
import type { ChangeLimits } from "../../definition/index.js";
import type { ImportMapper } from "../../mapping/index.js";
import type { StateStore } from "../../state/index.js";
import type { PlannedOp } from "../planned-op.js";
import { ChangeTally } from "./change-guard.js";
import { countSame, CreatedFields, planProduct, planRemoval, type PlanCounts, type ProductPlanConfig, type SameCounts } from "./plan.js";
import { SETTLED, type RowSource } from "./read.js";
import { SCOPE, SOURCE, sourceMatch, type SourceIndex } from "./source-index.js";
import { ScopeWait } from "./scope-wait.js";
import type { WorkDb } from "./workdb.js";
import type { SnapshotEntry } from "../../state/index.js";

/** Where planned operations go to be written (an OpWriter): a promise only when the writer is behind. */
export interface OpSink {
  add(op: PlannedOp): Promise<void> | undefined;
}

export interface PlannerRow {
  identifier: string;
  line: number;
  values: Record<string, string>;
  ignored: ReadonlySet<string>;
  /** The row's source fingerprint, which the snapshot takes with its values. */
  source?: RowSource;
}

export interface PlannerOptions {
  plan: ProductPlanConfig;
  work: WorkDb;
  output: OpSink;
  store: StateStore;
  snapshotKey: string;
  diff: boolean;
  live: boolean;
  /** The scope read, under way or done: its records, counted. With none in scope, no row is looked up. */
  scope: Promise<number>;
  /** Removal is configured: the scope records the feed mentions are marked. */
  markSeen: boolean;
  /** A diff run's snapshot fingerprints, read while the files download; without it the store is asked batch by batch. */
  sources?: Promise<SourceIndex | null>;
  /** change_limits of the fields the file config sets; each planner counts afresh (a second read plans anew). */
  changeLimits: { limits: ChangeLimits; fields: readonly string[] };
}

const NOTHING = new Map<string, Record<string, string>>();
const NO_TEXT = new Map<string, string>();

export class ProductPlanner {
  readonly counts: PlanCounts = { create: 0, update: 0, unchanged: 0, remove: 0, skipped: 0 };
  readonly same: SameCounts = { same_fields: 0, same: 0 };
  rowErrors = 0;
  removals = 0;
  readonly changes: ChangeTally;
  /**
   * Rows settled before the scope was in, whose records the scope then
   * lacked (deleted from the service, or no longer found by its search):
   * they were not mapped, so they are read again and planned once the feed is.
   */
  readonly vanished = new Set<string>();
  private readonly wait: ScopeWait<PlannerRow>;
  /** The source index of the batch being settled, and its slot of each row (`SourceIndex.lastSlot`). */
  private index: SourceIndex | null = null;
  private slots = new Int32Array(0);
  /** Per row of that batch, its slot when the entry is the identifier's own (`SourceIndex.lastOwn`). */
  private owns = new Int32Array(0);
  private readonly createdFields = new CreatedFields();

  constructor(
    private readonly o: PlannerOptions,
    public mapper: ImportMapper<SourceRow>,
  ) {
    this.changes = new ChangeTally(o.changeLimits.limits, o.changeLimits.fields);
    this.wait = new ScopeWait(o.scope, o.work);
  }

  /**
   * Plans a page of mapped records. Until the scope is in, the page is held
   * (planning needs the records' values in the service), up to a limit.
   */
  async page(rows: PlannerRow[]): Promise<void> {
    this.wait.check();
    if (this.wait.size === null) {
      this.wait.hold(rows);
      if (this.wait.full) await this.scopeIn();
      return;
    }
    if (this.wait.holding) await this.scopeIn();
    await this.planPage(rows);
  }

  /** A record the feed names without planning it (skipped, or its row failed): never a removal candidate. */
  mention(identifier: string): void {
    if (!this.o.markSeen) return;
    if (this.wait.size === null) this.wait.mention(identifier);
    else if (this.wait.size > 0) this.o.work.markMentioned(identifier);
  }

  /**
   * Waits for the scope read, then takes up what waited for it: the rows
   * settled meanwhile are checked against the scope in bulk (counted
   * unchanged, marked as mentioned, or noted as vanished), the held pages
   * planned in file order. Returns the number of records in scope.
   */
  async scopeIn(): Promise<number> {
    const size = await this.wait.read;
    const { lists, pages, mentioned } = this.wait.take();
    for (const { list, count } of lists) this.confirm(list, count, size);
    if (size > 0) for (const id of mentioned) this.o.work.markMentioned(id);
    for (const rows of pages) await this.planPage(rows);
    return size;
  }

  /** Rows settled by their fingerprints before the scope was in: unchanged where the scope has their records. */
  private confirm(list: string, count: number, size: number): void {
    const found = size === 0 ? new Uint8Array(count) : this.marked(list, count) ?? this.o.work.scopeHasList(list, count, this.o.markSeen);
    let missing = false;
    for (let k = 0; k < count; k++) {
      if (found[k] === 1) this.counts.unchanged += 1;
      else missing = true;
    }
    if (!missing) return;
    const ids = JSON.parse(list) as string[];
    for (let k = 0; k < count; k++) if (found[k] !== 1) this.vanished.add(ids[k] ?? "");
  }

  /**
   * `scopeHasList` of a waiting list, from the source index's marks where they
   * can tell (and the work database for the rest); null without marks.
   */
  private marked(list: string, count: number): Uint8Array | null {
    const index = this.index;
    if (index === null || !this.o.work.scopeMarkedIn(index)) return null;
    const ids = JSON.parse(list) as string[];
    const found = new Uint8Array(count);
    const ask: string[] = [];
    const askAt: number[] = [];
    for (let k = 0; k < count; k++) {
      const id = ids[k] ?? "";
      const state = index.scopeOf(id, this.o.markSeen);
      if (state === SCOPE.unknown) {
        ask.push(id);
        askAt.push(k);
      } else found[k] = state === SCOPE.in ? 1 : 0;
    }
    const asked = this.o.work.scopeHas(ask, this.o.markSeen);
    for (let j = 0; j < askAt.length; j++) found[askAt[j] ?? 0] = asked[j] ?? 0;
    return found;
  }

  private async planPage(rows: readonly PlannerRow[]): Promise<void> {
    const { o, mapper } = this;
    const ids = rows.map((r) => r.identifier);
    const scope = (this.wait.size ?? 0) > 0 ? o.work.scopeLookup(ids, o.markSeen) : NOTHING;
    const snapshot = o.diff ? await o.store.snapshotText(o.snapshotKey, ids) : NO_TEXT;
    // Without live diff, a record in scope whose values are the snapshot's text is unchanged: no parse, no compare, no commit.
    const textEqualMeansUnchanged = o.plan.update !== undefined && o.plan.liveDiff === undefined;
    const commits: SnapshotEntry[] = [];
    for (const row of rows) {
      let values = row.values;
      let ignored = row.ignored;
      const service = scope.get(row.identifier);
      if (mapper.hasServiceActions) {
        const acted = mapper.applyServiceActions(values, ignored, service);
        if (!acted.ok) {
          const message = "skipped" in acted ? `skipped by service_actions[${acted.skipped.rule}]` : acted.error.message;
          if ("skipped" in acted) await this.record({ kind: "skipped", action: null, identifier: row.identifier, line: row.line, changes: [], reason: message });
          else {
            this.rowErrors++;
            o.work.addDeferred({ kind: "error", line: row.line, identifier: row.identifier, message });
          }
          continue;
        }
        values = acted.record;
        ignored = acted.ignored;
      }
      const stored = snapshot.get(row.identifier);
      // A stored fingerprint of an older definition (or none) is replaced, so that the next run needs no mapping.
      const refill = o.live && row.source !== undefined && !row.source.current;
      if (stored !== undefined && service !== undefined && textEqualMeansUnchanged && stored === JSON.stringify(values)) {
        this.counts.unchanged += 1;
        if (refill) commits.push({ identifier: row.identifier, values, source: row.source?.fingerprint });
        continue;
      }
      const before = stored === undefined ? undefined : (JSON.parse(stored) as Record<string, string>);
      const op = planProduct(o.plan, { identifier: row.identifier, line: row.line, values, ignored, service, snapshot: before, diff: o.diff, createdFields: this.createdFields });
      const waiting = this.record(op);
      if (waiting) await waiting;
      // A snapshot entry that already holds these exact values is left alone: in a diff run that is most of a daily feed, not rewritten.
      if (o.live && op.kind !== "skipped" && (op.kind !== "unchanged" || before === undefined || refill || !sameRecord(before, values))) {
        commits.push({ identifier: row.identifier, values, source: row.source?.fingerprint });
      }
    }
    if (commits.length) o.work.addCommits(commits);
  }

  /**
   * Rows of a diff run, by identifier and source fingerprint, before they are
   * mapped: a row whose fingerprint is its snapshot entry's and whose record
   * is in scope is unchanged (what the plan finds of a mapped record equal to
   * the snapshot's text) and is counted here; it is not mapped. Returns a
   * SETTLED code per row. Before the scope is in, a row whose fingerprint
   * matches is settled all the same, and checked against the scope once it is.
   */
  async settle(identifiers: ReadonlyArray<string | undefined>, fingerprints: ReadonlyArray<string | undefined>): Promise<Uint8Array> {
    const { o } = this;
    const codes = new Uint8Array(identifiers.length);
    if (!o.diff || this.wait.size === 0 || o.plan.update === undefined || o.plan.liveDiff !== undefined || this.mapper.hasServiceActions) return codes;
    this.wait.check();
    const found = await this.sourceMatches(identifiers, fingerprints);
    // Index loops, not entries(): this runs for nearly every row of a diff run, and each entry is an allocation.
    const matched: string[] = [];
    const matchedAt: number[] = [];
    for (let i = 0; i < identifiers.length; i++) {
      const id = identifiers[i];
      if (id === undefined) continue;
      if (found[i] === SOURCE.equal) {
        matched.push(id);
        matchedAt.push(i);
      }
      // The snapshot's fingerprint is of this definition: a row that differs differs in its cells, and is mapped.
      if (found[i] !== SOURCE.none) codes[i] = SETTLED.current;
    }
    if (this.wait.size === null) {
      for (const at of matchedAt) codes[at] = SETTLED.unchanged;
      this.wait.settle(matched);
      if (this.wait.full) await this.scopeIn();
      return codes;
    }
    if (this.wait.holding) await this.scopeIn();
    const { ask, askAt } = this.markedInScope(matched, matchedAt, codes);
    const inScope = o.work.scopeHas(ask, o.markSeen);
    for (let k = 0; k < askAt.length; k++) {
      const at = askAt[k];
      if (at === undefined || inScope[k] !== 1) continue;
      codes[at] = SETTLED.unchanged;
      this.counts.unchanged += 1;
    }
    return codes;
  }

  /**
   * Row `i` of the batch `settle` took last: its identifier's own entry in
   * the source index (-1: none), for the repeat finder's marks; undefined
   * without an index.
   */
  ownEntry(i: number): number | undefined {
    return this.index === null ? undefined : (this.owns[i] ?? -1);
  }

  /**
   * Settles the matched rows whose scope membership the source index's marks
   * answer (every scope identifier reached them); returns the rest, for the
   * work database.
   */
  private markedInScope(matched: string[], matchedAt: number[], codes: Uint8Array): { ask: string[]; askAt: number[] } {
    const index = this.index;
    if (index === null || !this.o.work.scopeMarkedIn(index)) return { ask: matched, askAt: matchedAt };
    const ask: string[] = [];
    const askAt: number[] = [];
    for (let k = 0; k < matchedAt.length; k++) {
      const at = matchedAt[k] ?? 0;
      const slot = this.slots[at] ?? -1;
      if (slot < 0) {
        ask.push(matched[k] ?? "");
        askAt.push(at);
      } else if (index.inScopeAt(slot, this.o.markSeen)) {
        codes[at] = SETTLED.unchanged;
        this.counts.unchanged += 1;
      }
    }
    return { ask, askAt };
  }

  /** What the snapshot's fingerprint says of each row: from the run's source index, and the store for what the index cannot tell. */
  private async sourceMatches(identifiers: ReadonlyArray<string | undefined>, fingerprints: ReadonlyArray<string | undefined>): Promise<Uint8Array> {
    const { o } = this;
    const index = o.sources ? await o.sources : null;
    this.index = index;
    const found = new Uint8Array(identifiers.length);
    if (this.slots.length < identifiers.length) {
      this.slots = new Int32Array(identifiers.length);
      this.owns = new Int32Array(identifiers.length);
    }
    const ask: string[] = [];
    for (let i = 0; i < identifiers.length; i++) {
      this.slots[i] = -1;
      this.owns[i] = -1;
      const id = identifiers[i];
      if (id === undefined) continue;
      found[i] = index ? index.match(id, fingerprints[i] ?? "") : SOURCE.unknown;
      if (index) {
        this.slots[i] = index.lastSlot;
        this.owns[i] = index.lastOwn;
      }
      if (found[i] === SOURCE.unknown) ask.push(id);
    }
    if (ask.length === 0) return found;
    const stored = await o.store.snapshotSources(o.snapshotKey, ask);
    for (let i = 0; i < identifiers.length; i++) {
      const id = identifiers[i];
      if (id !== undefined && found[i] === SOURCE.unknown) found[i] = sourceMatch(stored.get(id), fingerprints[i] ?? "");
    }
    return found;
  }

  /** Scope records the feed did not mention, once every page is planned. */
  async planRemovals(): Promise<void> {
    if (!this.o.plan.remove) return;
    for (const ids of this.o.work.unmentioned()) {
      for (const id of ids) {
        const op = planRemoval(this.o.plan, id);
        if (!op) continue;
        this.removals++;
        await this.record(op);
      }
    }
  }

  /** Awaited only when a writer has a chunk to write. */
  private record(op: PlannedOp): Promise<void> | undefined {
    this.counts[op.kind] += 1;
    countSame(this.same, op);
    this.changes.note(op);
    if (op.kind === "skipped" && this.o.live) this.o.work.addDeferred({ kind: "skip", line: op.line, identifier: op.identifier, message: op.reason ?? "" });
    return this.o.output.add(op);
  }
}

function sameRecord(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) if (a[k] !== b[k]) return false;
  return true;
}
