import { randomBytes } from "node:crypto";
import pg from "pg";

/** The PostgreSQL of this machine and of CI (trust auth, database `test`). */
export const PG_URL = process.env.CONVEYOR_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * Fresh schemas for tests that share the one test database: each test takes
 * its own and drops it afterwards, so runs in parallel never see each other.
 */
export class PgSchemas {
  private readonly admin = new pg.Pool({ connectionString: PG_URL, max: 2 });
  private readonly made: string[] = [];

  fresh(): string {
    const name = `t_${randomBytes(6).toString("hex")}`;
    this.made.push(name);
    return name;
  }

  /** A state URL on a fresh schema (or the one given). */
  url(schema = this.fresh()): string {
    return `${PG_URL}?schema=${schema}`;
  }

  query<R extends pg.QueryResultRow>(sql: string, args: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.admin.query<R>(sql, args);
  }

  async dropAll(): Promise<void> {
    for (const s of this.made.splice(0)) await this.admin.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  }

  async end(): Promise<void> {
    await this.dropAll();
    await this.admin.end();
  }
}
