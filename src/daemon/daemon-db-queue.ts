import type Database from "better-sqlite3";
import { ConveyorError } from "../errors.js";
import { journalBody, journalRunSchema, type JournalEntry, type QueueJournal } from "./queue-journal.js";
import type { QueuedRun } from "./types.js";

/** The table of the daemon's queue journal; `seq` keeps the order runs were queued in. */
export const QUEUE_SCHEMA = `
  CREATE TABLE IF NOT EXISTS daemon_queue (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
    enqueued TEXT NOT NULL, body TEXT NOT NULL);`;

/** The queue journal in the SQLite state file (queue-journal.ts says what it is for). */
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
