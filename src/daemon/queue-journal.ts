import { z } from "zod";
import type { QueuedRun } from "./types.js";

/**
 * Where a daemon on SQLite keeps every run its queue accepted until the run
 * ends, so a `kill -9` loses none: at the next start a run without a record is
 * queued again under its id, and one with an open record is known to have been
 * this daemon's, so it is marked interrupted at once. With PostgreSQL the
 * cluster's shared queue holds them instead. The methods are synchronous: a
 * request answered `queued` must already be written.
 */
export interface QueueJournal {
  /** Keeps the run; throws when it cannot, so the request is refused rather than answered and lost. */
  add(run: QueuedRun, enqueued: string): void;
  remove(id: string): void;
  /** The runs kept, in the order they were queued; rows that no longer parse are named in `unreadable`. */
  list(): { entries: JournalEntry[]; unreadable: string[] };
}

export interface JournalEntry {
  run: QueuedRun;
  /** When the run was first queued (ISO); a run queued again keeps it. */
  enqueued: string;
}

/** A run as the journal stores it (JSON), checked when read back: the file may come from an older or damaged daemon. */
export const journalRunSchema = z.object({
  id: z.string().min(1),
  automation: z.string().min(1),
  account: z.string(),
  mode: z.enum(["prod", "debug"]),
  trigger: z.enum(["schedule", "manual", "api", "event"]),
  diff: z.boolean(),
  force: z.boolean(),
  notify: z.boolean(),
  email: z.string().nullable(),
  fireTime: z.string().optional(),
});

/** The run's own fields only, so the stored JSON never carries something a caller attached to the request. */
export function journalBody(run: QueuedRun): string {
  const { id, automation, account, mode, trigger, diff, force, notify, email, fireTime } = run;
  return JSON.stringify({ id, automation, account, mode, trigger, diff, force, notify, email, ...(fireTime === undefined ? {} : { fireTime }) });
}
