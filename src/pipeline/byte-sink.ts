import { createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import { finished } from "node:stream/promises";
import { ConveyorError } from "../errors.js";

/**
 * Buffers the disk is done with, by size, shared by every sink: a new buffer
 * per flush was a gigabyte of short-lived external memory in a million-row
 * debug run, and V8 answers external growth with full collections (81
 * instead of 67 in that run). Shared and capped, so a diff run holding a
 * bulk file open for each of hundreds of column sets keeps no more than this.
 */
const SPARE_BUFFERS = 4;
const DEFAULT_SIZE = 1 << 20;
const spares = new Map<number, Buffer[]>();

function takeBuffer(size: number): Buffer {
  return spares.get(size)?.pop() ?? Buffer.allocUnsafe(size);
}

function giveBack(buffer: Buffer): void {
  let free = spares.get(buffer.length);
  if (!free) spares.set(buffer.length, (free = []));
  if (free.length < SPARE_BUFFERS) free.push(buffer);
}

/**
 * A text file written through a byte buffer: each piece of text is encoded
 * into the buffer as it comes, so it dies young, and a full buffer goes to
 * disk whole. A million-row plan accumulated as strings instead keeps
 * megabytes of string pieces alive across collections, which V8 answers by
 * growing the heap to several hundred megabytes.
 */
export class ByteSink {
  private buffer: Buffer;
  private used = 0;
  private failure: Error | null = null;

  private constructor(
    private readonly stream: WriteStream,
    private readonly size: number,
  ) {
    this.buffer = takeBuffer(size);
    stream.on("error", (err) => {
      this.failure ??= err;
    });
  }

  /**
   * `size`: the bytes of one write (1 MB: a million-row plan.csv in 256 KB
   * writes made the debug run 0.13 s slower, though a bare write loop spends
   * less kernel time on them). `append`: add to what the file holds instead
   * of starting it over.
   */
  static async open(localPath: string, options: { size?: number; append?: boolean } = {}): Promise<ByteSink> {
    const size = options.size ?? DEFAULT_SIZE;
    // Room for a few buffers in flight: with the default 16 KB mark every flush waited for its write, and the run sat idle.
    const stream = createWriteStream(localPath, { highWaterMark: 4 * size, flags: options.append ? "a" : "w" });
    try {
      await once(stream, "open");
    } catch (err) {
      throw new ConveyorError("internal", `The work file ${localPath} cannot be created: ${String(err)}`, { cause: err });
    }
    return new ByteSink(stream, size);
  }

  /** Returns a promise only when a full buffer is handed to the disk. */
  write(text: string): Promise<void> | undefined {
    // A UTF-16 code unit takes at most three bytes in UTF-8.
    if (this.used + text.length * 3 <= this.size) {
      this.used += this.buffer.write(text, this.used);
      return undefined;
    }
    return this.flush().then(() => {
      if (text.length * 3 <= this.size) this.used += this.buffer.write(text, this.used);
      else return this.put(Buffer.from(text));
      return undefined;
    });
  }

  /**
   * Writing bytes in place: `room` makes space for up to `bytes` more in the
   * buffer (handing a full one to the disk first: a promise only then; false
   * when they could never fit), the caller writes into `buffer` from `used`,
   * then `advance`s to where it stopped.
   */
  room(bytes: number): Promise<void> | boolean {
    if (bytes > this.size) return false;
    return this.used + bytes <= this.size || this.flush();
  }

  get bytes(): Buffer {
    return this.buffer;
  }

  get at(): number {
    return this.used;
  }

  advance(to: number): void {
    this.used = to;
  }

  private async flush(): Promise<void> {
    if (this.used === 0) return;
    const full = this.buffer;
    const chunk = full.subarray(0, this.used);
    // The stream holds on to the chunk until it is written: the next text goes to another buffer.
    this.buffer = takeBuffer(this.size);
    this.used = 0;
    await this.put(chunk, () => giveBack(full));
  }

  private async put(chunk: Buffer, written?: () => void): Promise<void> {
    if (this.failure) throw this.failed();
    const ready = this.stream.write(chunk, (err) => {
      if (!err) written?.();
    });
    if (!ready) await once(this.stream, "drain");
  }

  async close(): Promise<void> {
    await this.flush();
    this.stream.end();
    await finished(this.stream).catch((err: unknown) => {
      throw this.failed(err);
    });
  }

  private failed(err: unknown = this.failure): ConveyorError {
    return new ConveyorError("internal", `Writing a work file failed: ${String(err)}`, { cause: err });
  }
}
