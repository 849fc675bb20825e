import type pg from "pg";
import { ConveyorError } from "../errors.js";
import { fromRow, type AutomationKind, type DefinitionRow, type DefinitionStore, type NewAutomation, type StoredAutomation } from "./definitions-store.js";

const COLUMNS = "id, account, kind, slug, shared_id, body, created, last_modified, source, source_hash";

/**
 * Two daemons can pick the same free slug at the same moment; the unique index
 * lets one win, and the other's request is answered as a conflict to repeat.
 */
function slugRace(err: unknown, slug: string): never {
  if ((err as { code?: unknown }).code === "23505") {
    throw new ConveyorError("conflict", `slug "${slug}" was just taken by another automation of this account; send the request again`);
  }
  throw err;
}

/** The definitions table in PostgreSQL: the same rows as in SQLite, shared by every daemon. */
export class PgDefinitionStore implements DefinitionStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async insert(a: NewAutomation): Promise<StoredAutomation> {
    const at = this.now().toISOString();
    const { rows } = await this.pool
      .query<DefinitionRow>(
        `INSERT INTO daemon_automations (account, kind, slug, shared_id, body, created, last_modified, source, source_hash)
         VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8) RETURNING ${COLUMNS}`,
        [a.account, a.kind, a.slug, a.sharedId ?? null, JSON.stringify(a.body), at, a.source ?? null, a.sourceHash ?? null],
      )
      .catch((err: unknown) => slugRace(err, a.slug));
    const row = rows[0];
    if (!row) throw new Error("the inserted automation is missing");
    return fromRow(row);
  }

  async update(id: number, change: { slug: string; body: Record<string, unknown>; sourceHash?: string | null }): Promise<void> {
    const args: Array<string | number | null> = [id, change.slug, JSON.stringify(change.body), this.now().toISOString()];
    let sql = "UPDATE daemon_automations SET slug = $2, body = $3, last_modified = $4";
    if (change.sourceHash !== undefined) {
      args.push(change.sourceHash);
      sql += ", source_hash = $5";
    }
    await this.pool.query(`${sql} WHERE id = $1`, args).catch((err: unknown) => slugRace(err, change.slug));
  }

  async get(id: number): Promise<StoredAutomation | null> {
    // Beyond an integer column's range no automation can exist; asking would be an error, not a miss.
    if (!Number.isInteger(id) || id < 1 || id > 2_147_483_647) return null;
    const { rows } = await this.pool.query<DefinitionRow>(`SELECT ${COLUMNS} FROM daemon_automations WHERE id = $1`, [id]);
    return rows[0] ? fromRow(rows[0]) : null;
  }

  async bySlug(account: string, kind: AutomationKind, slug: string): Promise<StoredAutomation | null> {
    const { rows } = await this.pool.query<DefinitionRow>(`SELECT ${COLUMNS} FROM daemon_automations WHERE account = $1 AND kind = $2 AND slug = $3`, [account, kind, slug]);
    return rows[0] ? fromRow(rows[0]) : null;
  }

  async list(account: string, kind: AutomationKind): Promise<StoredAutomation[]> {
    const { rows } = await this.pool.query<DefinitionRow>(`SELECT ${COLUMNS} FROM daemon_automations WHERE account = $1 AND kind = $2 ORDER BY id`, [account, kind]);
    return rows.map(fromRow);
  }

  async all(): Promise<StoredAutomation[]> {
    const { rows } = await this.pool.query<DefinitionRow>(`SELECT ${COLUMNS} FROM daemon_automations ORDER BY id`);
    return rows.map(fromRow);
  }

  async delete(id: number): Promise<boolean> {
    if (!Number.isInteger(id) || id < 1 || id > 2_147_483_647) return false;
    return ((await this.pool.query("DELETE FROM daemon_automations WHERE id = $1", [id])).rowCount ?? 0) > 0;
  }

  async reseal(id: number, body: Record<string, unknown>, lastModified: string): Promise<boolean> {
    const result = await this.pool.query("UPDATE daemon_automations SET body = $2 WHERE id = $1 AND last_modified = $3", [id, JSON.stringify(body), lastModified]);
    return (result.rowCount ?? 0) > 0;
  }

  async flush(): Promise<void> {
    // PostgreSQL's own write-ahead log and dead tuples are the server's to recycle (VACUUM); nothing here reaches them.
  }
}
