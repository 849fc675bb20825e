import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { eachRow, openReader } from "../../src/formats/index.js";
import type { ReadOptions, RecordReader, SourceRow } from "../../src/formats/index.js";

export interface TempDir {
  path(name: string): string;
  write(name: string, content: string | Buffer): Promise<string>;
  remove(): Promise<void>;
}

export async function tempDir(): Promise<TempDir> {
  const dir = await mkdtemp(join(tmpdir(), "formats-test-"));
  return {
    path: (name) => join(dir, name),
    write: async (name, content) => {
      const p = join(dir, name);
      await writeFile(p, content);
      return p;
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

export async function allRows(reader: RecordReader): Promise<SourceRow[]> {
  const rows: SourceRow[] = [];
  for await (const row of eachRow(reader)) rows.push(row);
  await reader.close();
  return rows;
}

/** Reads a file and maps every row through accessors for `fields` (missing accessors are an error). */
export async function readRecords(
  path: string,
  options: ReadOptions,
  fields: string[],
): Promise<{ columns: string[] | null; records: Array<Record<string, string | undefined>>; lines: number[] }> {
  const reader = await openReader(path, options);
  const columns = await reader.columns();
  const accessors = fields.map((f) => {
    const get = reader.accessor(f);
    if (!get) throw new Error(`no column ${f} in ${JSON.stringify(columns)}`);
    return [f, get] as const;
  });
  const rows = await allRows(reader);
  return {
    columns,
    lines: rows.map((r) => r.line),
    records: rows.map((row) => Object.fromEntries(accessors.map(([f, get]) => [f, get(row)]))),
  };
}

/**
 * Each `[name, body, root]` file holds an empty list of records: it reads as
 * no rows, with no columns to check field_map against (not as a file that
 * lacks every mapped field).
 */
export async function expectNoRecords(dir: TempDir, files: ReadonlyArray<readonly [string, string, string | undefined]>): Promise<void> {
  for (const [name, body, root] of files) {
    const reader = await openReader(await dir.write(name, body), root ? { root } : {});
    expect(await reader.columns()).toBeNull();
    expect(reader.accessor("sku")).not.toBeNull();
    expect(await allRows(reader)).toEqual([]);
  }
}
