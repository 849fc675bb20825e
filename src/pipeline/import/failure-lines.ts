/**
 * Where in the feed each record the apply failed stands, for its line in
 * errors.csv. The bulk files carry no source line, and keeping one per row
 * would cost every run for the rare one where records fail; so the pass's
 * files are read again, only when some failed, and only for a number of
 * them a person reads one by one. A repeated identifier takes its last
 * line (the last row wins). A file that cannot be read again leaves its
 * lines out: the lookup never fails the run.
 *
 * @module
 */

import type { Automation, FileConfig } from "../../definition/index.js";
import { eachRow, openReader } from "../../formats/index.js";
import type { SourcePlace } from "../debug-files.js";
import type { FailedRecords } from "../apply-journal.js";
import type { FetchedFile } from "./fetch.js";
import { QUIET_DEBUG, readAndMap, readOptions } from "./read.js";

const MAX_LOOKUP = 10_000;

/** What a pass knows of its feed: enough to read it again. */
interface Input {
  automation: Automation;
  config: FileConfig;
  now: () => Date;
  signal?: AbortSignal;
}

function wanted(failed: FailedRecords): Set<string> | null {
  if (failed.size === 0 || failed.size > MAX_LOOKUP) return null;
  const ids = new Set<string>();
  for (const [identifier] of failed.entries()) ids.add(identifier);
  return ids;
}

/** A mapped pass: the identifiers come out of the mapper, as the plan saw them. */
export async function mappedPlaces(input: Input, files: readonly FetchedFile[], failed: FailedRecords): Promise<Map<string, SourcePlace>> {
  const places = new Map<string, SourcePlace>();
  const ids = wanted(failed);
  if (!ids) return places;
  let file = -1;
  await readAndMap({
    automation: input.automation,
    config: input.config,
    files,
    debug: QUIET_DEBUG,
    // Called once per file, before its rows.
    beforeRows: async () => {
      file++;
    },
    sink: {
      record: (identifier, line) => {
        if (ids.has(identifier)) places.set(identifier, { file: files[file]?.remote.name ?? "", line });
      },
    },
    now: input.now,
    signal: input.signal,
  }).catch(() => undefined);
  return places;
}

/** A `bulk_file: 1` pass: the identifier is each row's second cell. */
export async function bulkFilePlaces(input: Input, files: readonly FetchedFile[], failed: FailedRecords): Promise<Map<string, SourcePlace>> {
  const places = new Map<string, SourcePlace>();
  const ids = wanted(failed);
  if (!ids) return places;
  for (const file of files) {
    try {
      const reader = await openReader(file.localPath, readOptions(input.config, input.automation.connection));
      try {
        await reader.columns();
        for await (const row of eachRow(reader, input.signal)) {
          const identifier = ((row.raw as string[])[1] ?? "").trim();
          if (ids.has(identifier)) places.set(identifier, { file: file.remote.name, line: row.line });
        }
      } finally {
        await reader.close();
      }
    } catch {
      // Lines are a help to the reader of errors.csv, never a reason to fail the run.
    }
  }
  return places;
}
