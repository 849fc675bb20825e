import { randomBytes } from "node:crypto";
import pg from "pg";

/** The PostgreSQL of the machine and of CI (trust auth); CONVEYOR_TEST_PG_URL overrides it. */
export const PG_URL = process.env.CONVEYOR_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * A fresh schema per test: the database URL with `?schema=` set, and a drop
 * that removes it and the queue's schema next to it.
 */
export function freshSchema(prefix = "t"): { url: string; schema: string; drop: () => Promise<void> } {
  const schema = `${prefix}_${randomBytes(5).toString("hex")}`;
  const url = `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}schema=${schema}`;
  return {
    url,
    schema,
    drop: async () => {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
