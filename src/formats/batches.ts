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

  /**
   * A hand-written iterator rather than an async generator: a row already in a batch is handed
   * over with one resolved promise, which keeps the per-row cost of a million-row file small.
   */
  rows(signal?: AbortSignal): AsyncIterable<SourceRow> {
    if (this.started) throw new ConveyorError("internal", "The rows of a file can be read only once");
    this.started = true;
    let batch: SourceRow[] = this.buffered.splice(0);
    let index = 0;
    const done: IteratorResult<SourceRow> = { done: true, value: undefined };
    const pull = async (): Promise<IteratorResult<SourceRow>> => {
      while (!this.ended) {
        checkAbort(signal);
        const next = await this.source.next();
        if (next.done) break;
        if (!next.value.length) continue;
        batch = next.value;
        index = 1;
        return { done: false, value: batch[0] as SourceRow };
      }
      this.ended = true;
      return done;
    };
    const iterator: AsyncIterator<SourceRow> = {
      next: () => {
        if (index < batch.length) {
          if (index === 0 && signal?.aborted) return Promise.reject(canceled());
          return Promise.resolve({ done: false, value: batch[index++] as SourceRow });
        }
        return pull();
      },
      return: async () => {
        await this.close();
        return done;
      },
    };
    return { [Symbol.asyncIterator]: () => iterator };
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
