import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { HttpError } from "../../http/envelopes.js";

/**
 * A pushed feed on its way in: the request body streamed (never held in
 * memory) to a private spool file under the data folder, counted and hashed
 * as it passes, and cut off at the size limit. Only a complete body leaves a
 * file; the storage connector then uploads it atomically (a hidden `.part`
 * name, renamed when complete), so no reader ever sees half a feed.
 */

export interface Spooled {
  file: string;
  bytes: number;
  sha256: string;
  /** Removes the spool file; safe to call twice. */
  discard(): Promise<void>;
}

export function tooLarge(limit: number): HttpError {
  const message = `the file is larger than the ${limit} bytes a pushed feed may have (CONVEYOR_PUSH_MAX_BYTES); nothing was stored`;
  return new HttpError(413, message, [{ message, code: 1 }]);
}

/** The body's declared size is refused before a byte is read. */
export function checkDeclaredSize(contentLength: string | undefined, limit: number): void {
  if (contentLength === undefined || !/^\d+$/.test(contentLength)) return;
  if (Number(contentLength) > limit) throw tooLarge(limit);
}

export async function spoolBody(body: Readable, dataDir: string, limit: number): Promise<Spooled> {
  const folder = path.join(dataDir, "push");
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const file = path.join(folder, `${randomBytes(12).toString("hex")}.part`);
  const hash = createHash("sha256");
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > limit) {
        done(tooLarge(limit));
        return;
      }
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const discard = (): Promise<void> => rm(file, { force: true });
  try {
    // A client that hangs up mid-body makes the source fail ("aborted"): the pipeline rejects and the spool goes.
    await pipeline(body, meter, createWriteStream(file, { mode: 0o600 }));
  } catch (err) {
    await discard();
    // Keep the rest of the body from being read: the answer is already known.
    body.destroy();
    if (err instanceof HttpError) throw err;
    throw new HttpError(400, `the upload ended before the body was complete (${(err as Error).message}); nothing was stored`);
  }
  return { file, bytes, sha256: hash.digest("hex"), discard };
}
