import type Database from "better-sqlite3";
import { holderMayBeAlive } from "./automation-lock.js";
import type { AutomationLock, LockRequest } from "./types.js";

/**
 * The automations' no-overlap locks in the SQLite state file: one row per
 * automation while a run of it executes in any process on the file. Each
 * attempt is one IMMEDIATE transaction, so two processes asking at once are
 * serialised by SQLite's write lock and exactly one of them inserts the row.
 */
export class SqliteLocks {
  constructor(private readonly db: Database.Database) {}

  lock(request: LockRequest, leaseMs: number): AutomationLock {
    const attempt = this.db.transaction((): AutomationLock => {
      const now = new Date();
      const current = this.get(request.automation);
      if (current?.run_id === request.runId) {
        this.db.prepare("UPDATE run_locks SET heartbeat = ? WHERE automation = ?").run(now.toISOString(), request.automation);
        return { ...current, heartbeat: now.toISOString() };
      }
      if (current && !this.dead(current, now, leaseMs)) return current;
      const lock: AutomationLock = { automation: request.automation, run_id: request.runId, holder: request.holder, started: now.toISOString(), heartbeat: now.toISOString() };
      this.db
        .prepare("INSERT OR REPLACE INTO run_locks (automation, run_id, holder, started, heartbeat) VALUES (?, ?, ?, ?, ?)")
        .run(lock.automation, lock.run_id, lock.holder, lock.started, lock.heartbeat);
      return lock;
    });
    return attempt.immediate();
  }

  renew(automation: string, runId: string): boolean {
    return this.db.prepare("UPDATE run_locks SET heartbeat = ? WHERE automation = ? AND run_id = ?").run(new Date().toISOString(), automation, runId).changes === 1;
  }

  release(automation: string, runId: string): void {
    this.db.prepare("DELETE FROM run_locks WHERE automation = ? AND run_id = ?").run(automation, runId);
  }

  private get(automation: string): AutomationLock | undefined {
    return this.db.prepare("SELECT automation, run_id, holder, started, heartbeat FROM run_locks WHERE automation = ?").get(automation) as AutomationLock | undefined;
  }

  /** A holder whose lease ran out, or whose process on this machine is gone (kill -9), holds nothing. */
  private dead(lock: AutomationLock, now: Date, leaseMs: number): boolean {
    return Date.parse(lock.heartbeat) < now.getTime() - leaseMs || !holderMayBeAlive(lock.holder);
  }
}
