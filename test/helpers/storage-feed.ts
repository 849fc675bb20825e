import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";

export interface StorageFeed {
  /** The data folder (CONVEYOR_DATA_DIR). */
  data: string;
  /** The definition file of an import that reads the feed. */
  definition: string;
}

/**
 * `stock.csv` in the demo account's storage (`feeds/`) of `<dir>/data`, aged
 * an hour past min_age (a fresh file would be waited for), and a products
 * import definition that reads it with `fileConfig` (its name and the
 * connection are set here).
 */
export function storageFeed(dir: string, options: { slug: string; csv: string; fileConfig: Record<string, unknown> }): StorageFeed {
  const data = path.join(dir, "data");
  const feeds = path.join(data, "storage", "demo", "feeds");
  mkdirSync(feeds, { recursive: true });
  const feed = path.join(feeds, "stock.csv");
  writeFileSync(feed, options.csv);
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(feed, hourAgo, hourAgo);
  const definition = path.join(dir, `${options.slug}.json`);
  const automation = {
    name: options.slug,
    slug: options.slug,
    active: true,
    schedule: "0 * * * *",
    type: "products",
    action: "import",
    connection: { type: "sdsftp", path: "feeds" },
    file_configs: [{ name: "stock.csv", ...options.fileConfig }],
  };
  writeFileSync(definition, JSON.stringify(automation));
  return { data, definition };
}
