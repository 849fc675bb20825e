import { ConveyorError } from "../errors.js";
import type { SourceRow } from "./types.js";

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

  async *rows(signal?: AbortSignal): AsyncGenerator<SourceRow> {
    if (this.started) throw new ConveyorError("internal", "The rows of a file can be read only once");
    this.started = true;
    while (this.buffered.length) {
      checkAbort(signal);
      const row = this.buffered.shift();
      if (row) yield row;
    }
    while (!this.ended) {
      checkAbort(signal);
      const next = await this.source.next();
      if (next.done) break;
      for (const row of next.value) yield row;
    }
    this.ended = true;
  }

  async close(): Promise<void> {
    this.ended = true;
    await this.source.return?.();
  }
}

export function checkAbort(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new ConveyorError("canceled", "Reading the file was canceled");
}
