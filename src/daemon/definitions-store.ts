import type Database from "better-sqlite3";

export type AutomationKind = "custom" | "installed";

/**
 * One stored automation. `body` is the raw definition as written (custom) or
 * the installer's part (installed: `{active, schedule?, parameters}`), with
 * encrypted parameter values already encrypted: nothing here is plain secret
 * except what the definition itself says in clear.
 */
export interface StoredAutomation {
  id: number;
  account: string;
  kind: AutomationKind;
  slug: string;
  sharedId: string | null;
  body: Record<string, unknown>;
  created: string;
  lastModified: string;
  /** The file it was loaded from (CONVEYOR_AUTOMATIONS), and that file's hash when last loaded. */
  source: string | null;
  sourceHash: string | null;
}

export interface DefinitionRow {
  id: number;
  account: string;
  kind: string;
  slug: string;
  shared_id: string | null;
  /** JSON text in SQLite; PostgreSQL's json column arrives parsed. */
  body: string | Record<string, unknown>;
  created: string;
  last_modified: string;
  source: string | null;
  source_hash: string | null;
}

export function fromRow(row: DefinitionRow): StoredAutomation {
  return {
    id: row.id,
    account: row.account,
    kind: row.kind === "installed" ? "installed" : "custom",
    slug: row.slug,
    sharedId: row.shared_id,
    body: typeof row.body === "string" ? (JSON.parse(row.body) as Record<string, unknown>) : row.body,
    created: row.created,
    lastModified: row.last_modified,
    source: row.source,
    sourceHash: row.source_hash,
  };
}

export interface NewAutomation {
  account: string;
  kind: AutomationKind;
  slug: string;
  sharedId?: string | null;
  body: Record<string, unknown>;
  source?: string | null;
  sourceHash?: string | null;
}

/** The definitions table: plain rows in, plain rows out; validation lives in `DefinitionService`. */
export interface DefinitionStore {
  insert(a: NewAutomation): Promise<StoredAutomation>;
  update(id: number, change: { slug: string; body: Record<string, unknown>; sourceHash?: string | null }): Promise<void>;
  get(id: number): Promise<StoredAutomation | null>;
  bySlug(account: string, kind: AutomationKind, slug: string): Promise<StoredAutomation | null>;
  /** Ordered by id. */
  list(account: string, kind: AutomationKind): Promise<StoredAutomation[]>;
  all(): Promise<StoredAutomation[]>;
  delete(id: number): Promise<boolean>;
  /**
   * The body rewritten in place with its secrets sealed (the migration of
   * older databases): `last_modified` stays, and a row changed since it was
   * read (same id, other `last_modified`) is left for the next start.
   */
  reseal(id: number, body: Record<string, unknown>, lastModified: string): Promise<boolean>;
  /** After a reseal: no clear copy of the old rows may stay in a write-ahead log. */
  flush(): Promise<void>;
}

export class SqliteDefinitionStore implements DefinitionStore {
  constructor(
    private readonly db: Database.Database,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async insert(a: NewAutomation): Promise<StoredAutomation> {
    const at = this.now().toISOString();
    const info = this.db
      .prepare(
        `INSERT INTO daemon_automations (account, kind, slug, shared_id, body, created, last_modified, source, source_hash)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(a.account, a.kind, a.slug, a.sharedId ?? null, JSON.stringify(a.body), at, at, a.source ?? null, a.sourceHash ?? null);
    const stored = await this.get(Number(info.lastInsertRowid));
    if (!stored) throw new Error("the inserted automation is missing");
    return stored;
  }

  async update(id: number, change: { slug: string; body: Record<string, unknown>; sourceHash?: string | null }): Promise<void> {
    const sets = ["slug = ?", "body = ?", "last_modified = ?"];
    const args: Array<string | number | null> = [change.slug, JSON.stringify(change.body), this.now().toISOString()];
    if (change.sourceHash !== undefined) {
      sets.push("source_hash = ?");
      args.push(change.sourceHash);
    }
    this.db.prepare(`UPDATE daemon_automations SET ${sets.join(", ")} WHERE id = ?`).run(...args, id);
  }

  async get(id: number): Promise<StoredAutomation | null> {
    const row = this.db.prepare("SELECT * FROM daemon_automations WHERE id = ?").get(id) as DefinitionRow | undefined;
    return row ? fromRow(row) : null;
  }

  async bySlug(account: string, kind: AutomationKind, slug: string): Promise<StoredAutomation | null> {
    const row = this.db.prepare("SELECT * FROM daemon_automations WHERE account = ? AND kind = ? AND slug = ?").get(account, kind, slug) as DefinitionRow | undefined;
    return row ? fromRow(row) : null;
  }

  async list(account: string, kind: AutomationKind): Promise<StoredAutomation[]> {
    const rows = this.db.prepare("SELECT * FROM daemon_automations WHERE account = ? AND kind = ? ORDER BY id").all(account, kind) as DefinitionRow[];
    return rows.map(fromRow);
  }

  async all(): Promise<StoredAutomation[]> {
    return (this.db.prepare("SELECT * FROM daemon_automations ORDER BY id").all() as DefinitionRow[]).map(fromRow);
  }

  async delete(id: number): Promise<boolean> {
    return this.db.prepare("DELETE FROM daemon_automations WHERE id = ?").run(id).changes > 0;
  }

  async reseal(id: number, body: Record<string, unknown>, lastModified: string): Promise<boolean> {
    return this.db.prepare("UPDATE daemon_automations SET body = ? WHERE id = ? AND last_modified = ?").run(JSON.stringify(body), id, lastModified).changes > 0;
  }

  async flush(): Promise<void> {
    // TRUNCATE copies the log into the database file (whose freed cells secure_delete zeroed) and empties the -wal file.
    this.db.pragma("wal_checkpoint(TRUNCATE)");
  }
}
