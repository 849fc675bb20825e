import { createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import { finished } from "node:stream/promises";
import { ConveyorError } from "../errors.js";

const FLUSH_AT = 64 * 1024;

/**
 * A text file written in 64 KB pieces that waits for the disk when it falls behind (backpressure),
 * counting the bytes it wrote.
 */
export class FileSink {
  private parts: string[] = [];
  private pending = 0;
  private failure: Error | null = null;
  bytes = 0;

  private constructor(private readonly stream: WriteStream) {
    stream.on("error", (err) => {
      this.failure ??= err;
    });
  }

  static async open(localPath: string): Promise<FileSink> {
    const stream = createWriteStream(localPath);
    try {
      await once(stream, "open");
    } catch (err) {
      throw new ConveyorError("internal", `The export file cannot be created: ${String(err)}`, { cause: err });
    }
    return new FileSink(stream);
  }

  async write(text: string): Promise<void> {
    this.parts.push(text);
    this.pending += text.length;
    if (this.pending >= FLUSH_AT) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.failure) throw this.failed();
    if (!this.parts.length) return;
    const chunk = this.parts.join("");
    this.parts = [];
    this.pending = 0;
    this.bytes += Buffer.byteLength(chunk);
    if (!this.stream.write(chunk)) await once(this.stream, "drain");
  }

  async close(): Promise<number> {
    await this.flush();
    this.stream.end();
    await finished(this.stream).catch((err: unknown) => {
      throw this.failed(err);
    });
    return this.bytes;
  }

  private failed(err: unknown = this.failure): ConveyorError {
    return new ConveyorError("internal", `Writing the export file failed: ${String(err)}`, { cause: err });
  }
}
