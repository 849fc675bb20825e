import type Database from "better-sqlite3";
import type pg from "pg";
import type { SessionRow, SessionRows } from "./daemon-db-types.js";

/*
 * The console's sessions in the daemon's database, SQLite and PostgreSQL
 * alike: a session signed in on one daemon of a cluster is known to all. ISO
 * texts compare in time order, so `expires < now` needs no date type.
 */

const COLUMNS = "id_hash, account, token_mac, created, expires, last_seen";

export class SqliteSessionRows implements SessionRows {
  constructor(private readonly db: Database.Database) {}

  async insert(row: SessionRow): Promise<void> {
    this.db.prepare(`INSERT INTO daemon_console_sessions (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`).run(row.id_hash, row.account, row.token_mac, row.created, row.expires, row.last_seen);
  }

  async get(idHash: string): Promise<SessionRow | null> {
    return (this.db.prepare(`SELECT ${COLUMNS} FROM daemon_console_sessions WHERE id_hash = ?`).get(idHash) as SessionRow | undefined) ?? null;
  }

  async touch(idHash: string, lastSeen: string): Promise<void> {
    this.db.prepare("UPDATE daemon_console_sessions SET last_seen = ? WHERE id_hash = ?").run(lastSeen, idHash);
  }

  async delete(idHash: string): Promise<boolean> {
    return this.db.prepare("DELETE FROM daemon_console_sessions WHERE id_hash = ?").run(idHash).changes > 0;
  }

  async prune(now: string): Promise<number> {
    return this.db.prepare("DELETE FROM daemon_console_sessions WHERE expires < ?").run(now).changes;
  }
}

export class PgSessionRows implements SessionRows {
  constructor(private readonly pool: pg.Pool) {}

  async insert(row: SessionRow): Promise<void> {
    await this.pool.query(`INSERT INTO daemon_console_sessions (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`, [row.id_hash, row.account, row.token_mac, row.created, row.expires, row.last_seen]);
  }

  async get(idHash: string): Promise<SessionRow | null> {
    const { rows } = await this.pool.query<SessionRow>(`SELECT ${COLUMNS} FROM daemon_console_sessions WHERE id_hash = $1`, [idHash]);
    return rows[0] ?? null;
  }

  async touch(idHash: string, lastSeen: string): Promise<void> {
    await this.pool.query("UPDATE daemon_console_sessions SET last_seen = $2 WHERE id_hash = $1", [idHash, lastSeen]);
  }

  async delete(idHash: string): Promise<boolean> {
    return ((await this.pool.query("DELETE FROM daemon_console_sessions WHERE id_hash = $1", [idHash])).rowCount ?? 0) > 0;
  }

  async prune(now: string): Promise<number> {
    return (await this.pool.query("DELETE FROM daemon_console_sessions WHERE expires < $1", [now])).rowCount ?? 0;
  }
}
