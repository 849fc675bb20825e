import type Database from "better-sqlite3";
import { z } from "zod";
import { ConveyorError } from "../errors.js";
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
  // An undo waiting when the daemon stopped must come back as that undo, never as a run of the automation.
  undo: z.object({ of: z.string().min(1), identifiers: z.array(z.string()), fields: z.array(z.string()) }).optional(),
});

/** The run's own fields only, so the stored JSON never carries something a caller attached to the request. */
export function journalBody(run: QueuedRun): string {
  const { id, automation, account, mode, trigger, diff, force, notify, email, fireTime, undo } = run;
  return JSON.stringify({ id, automation, account, mode, trigger, diff, force, notify, email, ...(fireTime === undefined ? {} : { fireTime }), ...(undo === undefined ? {} : { undo }) });
}

/** The table of the daemon's queue journal; `seq` keeps the order runs were queued in. */
export const QUEUE_SCHEMA = `
  CREATE TABLE IF NOT EXISTS daemon_queue (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
    enqueued TEXT NOT NULL, body TEXT NOT NULL);`;

/** The queue journal in the SQLite state file. */
export class SqliteQueueJournal implements QueueJournal {
  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
  ) {}

  add(run: QueuedRun, enqueued: string): void {
    try {
      this.db.prepare("INSERT OR REPLACE INTO daemon_queue (id, enqueued, body) VALUES (?, ?, ?)").run(run.id, enqueued, journalBody(run));
    } catch (err) {
      throw new ConveyorError("state", `the run of automation ${run.automation} could not be kept in the queue table of ${this.file}: ${(err as Error).message}`, {
        cause: err,
        retryable: true,
        hint: "check that the data folder is writable and has room, then ask for the run again",
      });
    }
  }

  remove(id: string): void {
    this.db.prepare("DELETE FROM daemon_queue WHERE id = ?").run(id);
  }

  list(): { entries: JournalEntry[]; unreadable: string[] } {
    const rows = this.db.prepare("SELECT id, enqueued, body FROM daemon_queue ORDER BY seq").all() as Array<{ id: string; enqueued: string; body: string }>;
    const entries: JournalEntry[] = [];
    const unreadable: string[] = [];
    for (const row of rows) {
      const run = parseRun(row.body);
      if (run && run.id === row.id && !Number.isNaN(Date.parse(row.enqueued))) entries.push({ run, enqueued: row.enqueued });
      else unreadable.push(row.id);
    }
    return { entries, unreadable };
  }
}

function parseRun(body: string): QueuedRun | null {
  try {
    const parsed = journalRunSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
