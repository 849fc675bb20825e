import { ConveyorError } from "../errors.js";
import type { RecordReader, SourceRow } from "./types.js";

/**
 * Rows produced in batches by a parser (one batch per decoded chunk), with the first rows
 * available before iteration starts: the header check needs them before the first record is used.
 */
export class RowBatches {
  private readonly buffered: SourceRow[] = [];
  private ended = false;
  private started = false;

  constructor(private readonly source: AsyncIterator<SourceRow[]>) {}

  /** Buffers until at least `count` rows are read or the file ends; returns the buffered rows. */
  async head(count: number): Promise<readonly SourceRow[]> {
    while (this.buffered.length < count && !this.ended) {
      const next = await this.source.next();
      if (next.done) this.ended = true;
      else for (const row of next.value) this.buffered.push(row);
    }
    return this.buffered;
  }

  /** Takes the first buffered row out (a header row). */
  async shift(): Promise<SourceRow | undefined> {
    await this.head(1);
    return this.buffered.shift();
  }

  /**
   * The rows a batch at a time, the buffered ones first: a consumer loops over
   * a batch's rows without an await per row, which a row-by-row async
   * iterator would spend on every row of a large import.
   */
  async *batches(signal?: AbortSignal): AsyncGenerator<readonly SourceRow[]> {
    if (this.started) throw new ConveyorError("internal", "The rows of a file can be read only once");
    this.started = true;
    try {
      const buffered = this.buffered.splice(0);
      if (buffered.length) {
        checkAbort(signal);
        yield buffered;
      }
      while (!this.ended) {
        checkAbort(signal);
        const next = await this.source.next();
        if (next.done) break;
        if (next.value.length) yield next.value;
      }
      this.ended = true;
    } finally {
      // A consumer that stopped early (a break, a cancel) lets the parser go.
      if (!this.ended) await this.close();
    }
  }

  async close(): Promise<void> {
    this.ended = true;
    await this.source.return?.();
  }
}

function canceled(): ConveyorError {
  return new ConveyorError("canceled", "Reading the file was canceled");
}

export function checkAbort(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw canceled();
}

/** The rows of a reader one at a time, for a consumer that has no use for batches. */
export async function* eachRow(reader: Pick<RecordReader, "batches">, signal?: AbortSignal): AsyncGenerator<SourceRow> {
  for await (const batch of reader.batches(signal)) yield* batch;
}
