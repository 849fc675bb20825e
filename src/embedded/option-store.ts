import type { Db } from "./db.js";

const SCHEMA = "CREATE TABLE IF NOT EXISTS options (name TEXT PRIMARY KEY, value TEXT NOT NULL)";

/**
 * Options every account has before it sets any (the seed lists none; these
 * are the ones the sandbox itself reads): `image_media_locations` is the
 * list of extra asset paths of v1 part 4.7.
 */
export const DEFAULT_OPTIONS: Readonly<Record<string, string>> = { image_media_locations: "" };

/** A name an option may have: what settings forms and the option path can carry. */
export const OPTION_NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/** The account's options (v1 part 4.4) as name → text in SQLite. */
export class OptionStore {
  constructor(private readonly db: Db) {
    db.exec(SCHEMA);
  }

  all(): Record<string, string> {
    const rows = this.db.prepare("SELECT name, value FROM options ORDER BY name").all() as { name: string; value: string }[];
    const out: Record<string, string> = { ...DEFAULT_OPTIONS };
    for (const row of rows) out[row.name] = row.value;
    return out;
  }

  get(name: string): string | undefined {
    const row = this.db.prepare("SELECT value FROM options WHERE name = ?").get(name) as { value: string } | undefined;
    return row?.value ?? DEFAULT_OPTIONS[name];
  }

  setMany(values: Record<string, string>): void {
    const put = this.db.prepare("INSERT INTO options (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value");
    this.db.transaction(() => {
      for (const [name, value] of Object.entries(values)) put.run(name, value);
    })();
  }
}
