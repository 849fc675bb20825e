import { close, open, writev } from "node:fs";
import { Writable } from "node:stream";
import { unwritten } from "./writev-rest.js";

/*
 * A write stream to a local file, as fs.createWriteStream, that tells
 * `release` when each chunk is on disk, so the buffers it came in can be
 * read into again (released-reads.ts).
 */
export class FileSink extends Writable {
  private fd: number | undefined;
  private position = 0;

  constructor(
    private readonly path: string,
    private readonly release: (chunk: Buffer) => void,
    highWaterMark: number,
  ) {
    super({ highWaterMark });
  }

  override _construct(callback: (err?: Error | null) => void): void {
    open(this.path, "w", (err, fd) => {
      this.fd = fd;
      callback(err);
    });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.writeAll([chunk], callback);
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (err?: Error | null) => void): void {
    this.writeAll(
      chunks.map((c) => c.chunk),
      callback,
    );
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    const fd = this.fd;
    this.fd = undefined;
    if (fd === undefined) return callback(err);
    close(fd, (closeErr) => callback(err ?? closeErr));
  }

  /** writev may write less than asked: the rest goes again, and the chunks are released once all of them are written. */
  private writeAll(chunks: Buffer[], callback: (err?: Error | null) => void): void {
    const fd = this.fd;
    if (fd === undefined) return callback(new Error("the file is not open"));
    let left = chunks;
    const step = (err: NodeJS.ErrnoException | null, written: number): void => {
      if (err) return callback(err);
      this.position += written;
      left = unwritten(left, written);
      if (left.length > 0 && written > 0) return writev(fd, left, this.position, step);
      if (left.length > 0) return callback(new Error(`writing the download stopped at byte ${this.position}`));
      for (const c of chunks) this.release(c);
      callback();
    };
    writev(fd, left, this.position, step);
  }
}
