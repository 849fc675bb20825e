import { closeSync, createWriteStream, openSync, writeSync, type WriteStream } from "node:fs";
import { once } from "node:events";
import { finished } from "node:stream/promises";
import { ConveyorError } from "../../errors.js";

/**
 * Buffers the disk is done with, by size, shared by every sink: a new buffer
 * per flush adds up to a lot of short-lived external memory in a big debug
 * run, and V8 answers external growth with full collections. Shared and
 * capped, so a diff run holding a bulk file open for each of hundreds of
 * column sets keeps no more than this.
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

/** Where a sink's full buffers go; `done` once a chunk's bytes are no longer needed. */
interface Out {
  write(chunk: Buffer, done: () => void): Promise<void> | undefined;
  close(): Promise<void>;
}

function writeFailed(err: unknown): ConveyorError {
  return new ConveyorError("internal", `Writing a work file failed: ${String(err)}`, { cause: err });
}

function openFailed(localPath: string, err: unknown): ConveyorError {
  return new ConveyorError("internal", `The work file ${localPath} cannot be created: ${String(err)}`, { cause: err });
}

/** Through a write stream: the thread goes on while the disk writes. */
class StreamOut implements Out {
  private failure: unknown = null;

  private constructor(private readonly stream: WriteStream) {
    stream.on("error", (err) => {
      this.failure ??= err;
    });
  }

  static async open(localPath: string, size: number, append: boolean): Promise<StreamOut> {
    // Room for a few buffers in flight: with the default 16 KB mark every flush waited for its write, and the run sat idle.
    const stream = createWriteStream(localPath, { highWaterMark: 4 * size, flags: append ? "a" : "w" });
    try {
      await once(stream, "open");
    } catch (err) {
      throw openFailed(localPath, err);
    }
    return new StreamOut(stream);
  }

  write(chunk: Buffer, done: () => void): Promise<void> | undefined {
    if (this.failure) return Promise.reject(writeFailed(this.failure));
    const ready = this.stream.write(chunk, (err) => {
      if (!err) done();
    });
    return ready ? undefined : once(this.stream, "drain").then(() => undefined);
  }

  async close(): Promise<void> {
    this.stream.end();
    await finished(this.stream).catch((err: unknown) => {
      throw writeFailed(err);
    });
  }
}

/**
 * Written before `write` returns, for a thread that does nothing but write
 * files: a blocking write costs the kernel a fraction of what a write
 * stream costs, before the thread's own handing over of each chunk.
 */
class BlockingOut implements Out {
  private constructor(private readonly fd: number) {}

  static open(localPath: string, append: boolean): BlockingOut {
    try {
      return new BlockingOut(openSync(localPath, append ? "a" : "w"));
    } catch (err) {
      throw openFailed(localPath, err);
    }
  }

  write(chunk: Buffer, done: () => void): undefined {
    try {
      for (let at = 0; at < chunk.length; ) at += writeSync(this.fd, chunk, at, chunk.length - at);
    } catch (err) {
      throw writeFailed(err);
    }
    done();
    return undefined;
  }

  async close(): Promise<void> {
    closeSync(this.fd);
  }
}

export interface ByteSinkOptions {
  /**
   * The bytes of one write (1 MB: smaller writes made a big debug run
   * slower, though a bare write loop spends less kernel time on them).
   */
  size?: number;
  /** Add to what the file holds instead of starting it over. */
  append?: boolean;
  /** Write each full buffer before going on: only on a thread that has nothing else to do. */
  blocking?: boolean;
}

/** A line a sink writes as bytes into its own buffer (ByteSink.place). */
export interface PlacedLine {
  /** The most bytes `put` writes. */
  bound(): number;
  /** Writes the line into `dst` at `at`; returns where it ended. */
  put(dst: Buffer, at: number): number;
  /** The line as text, for when its bytes could never fit a buffer. */
  text(): string;
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
  private closed = false;
  /** Bytes written so far, buffered ones included. */
  bytes = 0;

  private constructor(
    private readonly out: Out,
    private readonly size: number,
  ) {
    this.buffer = takeBuffer(size);
  }

  static async open(localPath: string, options: ByteSinkOptions = {}): Promise<ByteSink> {
    const size = options.size ?? DEFAULT_SIZE;
    const append = options.append === true;
    const out = options.blocking ? BlockingOut.open(localPath, append) : await StreamOut.open(localPath, size, append);
    return new ByteSink(out, size);
  }

  /** Returns a promise only when a full buffer is handed to the disk and the disk is behind. */
  write(text: string): Promise<void> | undefined {
    // A UTF-16 code unit takes at most three bytes in UTF-8.
    if (this.used + text.length * 3 <= this.size) {
      const bytes = this.buffer.write(text, this.used);
      this.used += bytes;
      this.bytes += bytes;
      return undefined;
    }
    const rest = (): Promise<void> | undefined => {
      if (text.length * 3 > this.size) {
        const whole = Buffer.from(text);
        this.bytes += whole.length;
        return this.out.write(whole, () => undefined);
      }
      const bytes = this.buffer.write(text, this.used);
      this.used += bytes;
      this.bytes += bytes;
      return undefined;
    };
    const flushed = this.flush();
    return flushed ? flushed.then(rest) : rest();
  }

  /**
   * Writes `line` straight into the buffer, handing a full one to the disk
   * first (a promise only when the disk is behind); a line whose bound could
   * never fit a buffer goes as its text. The caller keeps `line` as it is
   * until the promise settles.
   */
  place(line: PlacedLine): Promise<void> | undefined {
    const bytes = line.bound();
    if (bytes > this.size) return this.write(line.text());
    const flushed = this.used + bytes > this.size ? this.flush() : undefined;
    const put = (): void => {
      const end = line.put(this.buffer, this.used);
      this.bytes += end - this.used;
      this.used = end;
    };
    if (flushed) return flushed.then(put);
    put();
    return undefined;
  }

  private flush(): Promise<void> | undefined {
    if (this.closed) throw new ConveyorError("internal", "A work file was written after it was closed");
    if (this.used === 0) return undefined;
    const full = this.buffer;
    const chunk = full.subarray(0, this.used);
    // The stream holds on to the chunk until it is written: the next text goes to another buffer.
    this.buffer = takeBuffer(this.size);
    this.used = 0;
    return this.out.write(chunk, () => giveBack(full));
  }

  /**
   * Writes what is buffered and gives the buffer back. Taking a fresh buffer
   * at the last flush and dropping it left a buffer a file as garbage, which
   * only a collection frees: hundreds of bulk files grew the writer thread's
   * external memory by tens of megabytes. Closing twice does nothing more.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const last = this.buffer;
    const used = this.used;
    // Every later write reaches flush, which refuses it.
    this.buffer = Buffer.alloc(0);
    this.used = this.size;
    if (used > 0) await this.out.write(last.subarray(0, used), () => giveBack(last));
    else giveBack(last);
    await this.out.close();
  }
}
