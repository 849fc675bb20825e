import { open, type FileHandle } from "node:fs/promises";
import type { SFTPWrapper } from "ssh2";
import { ConveyorError } from "../src/errors.js";

/*
 * A download that reads one file over several SFTP channels at once, each
 * channel working through its own byte ranges with many read requests in
 * flight, and writes every chunk at its offset in the local file.
 *
 * Why several channels: an SSH channel's window (2 MiB in ssh2) caps one
 * channel at window ÷ round trip, about 50 MB/s at 40 ms, whatever the
 * pipelining. Why ranges rather than one shared cursor: each channel is its
 * own sftp-server process with its own file handle, and sequential reads per
 * handle keep the server's read-ahead working.
 *
 * Memory stays flat: each channel owns `inFlight` buffers of one chunk and
 * reuses a buffer only once its positioned write has finished.
 */

export interface RangeOptions {
  /** Bytes per read request; capped by what the server grants (OpenSSH: 255 KiB). */
  chunkSize: number;
  /** Bytes a channel keeps requested ahead (rounded to whole chunks, at least 2, at most 128). */
  bytesInFlight: number;
  /** Bytes a channel reads in sequence before it takes the next range. */
  rangeSize: number;
}

/** A byte range of the file and how much of it has arrived. */
interface Range {
  start: number;
  end: number;
  /** Next offset to request. */
  next: number;
  received: number;
}

interface Shared {
  readonly size: number;
  readonly ranges: Range[];
  taken: number;
  error: unknown;
}

/** What the channel grants per read: ssh2 learns it from OpenSSH's limits extension and splits longer reads into a second round trip. */
export function grantedReadSize(sftp: SFTPWrapper, wanted: number): number {
  const granted = (sftp as unknown as { _maxReadLen?: unknown })._maxReadLen;
  return typeof granted === "number" && granted > 0 ? Math.min(wanted, granted) : wanted;
}

export function planRanges(size: number, rangeSize: number): Range[] {
  const ranges: Range[] = [];
  for (let start = 0; start < size; start += rangeSize) {
    ranges.push({ start, end: Math.min(size, start + rangeSize), next: start, received: 0 });
  }
  return ranges;
}

function changedError(remotePath: string, detail: string): ConveyorError {
  return new ConveyorError("transfer", `sftp download of ${remotePath}: ${detail}`, {
    retryable: true,
    hint: "The file was changing on the server while it was read; the run can be retried once it is complete.",
  });
}

/** ssh2 fails every pending request with "No response from server" when the connection goes; that is a drop, not a refusal. */
function readError(err: Error, position: number, size: number): Error {
  if (/No response from server/i.test(err.message)) {
    return Object.assign(new Error(`connection closed at byte ${position} of ${size} (${err.message})`), { code: "ECONNRESET", cause: err });
  }
  return err;
}

/** ssh2 silently drops a request on a channel that is no longer open and never calls back: ask first. */
export function channelOpen(sftp: SFTPWrapper): boolean {
  const outgoing = (sftp as unknown as { outgoing?: { state?: unknown } }).outgoing;
  return outgoing?.state === "open";
}

function call<T>(fn: (cb: (err: Error | null | undefined, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));
}

/**
 * One channel's share: take a range, keep `slots` reads in flight through it,
 * re-request the rest of a short read, and take the next range until none is
 * left. Resolves once nothing of this channel is in flight, also after a failure.
 */
function readRanges(sftp: SFTPWrapper, handle: Buffer, shared: Shared, file: FileHandle, chunk: number, slots: number, progress: () => void, remotePath: string): Promise<void> {
  return new Promise((resolve) => {
    const free: Buffer[] = [];
    const retries: Array<{ range: Range; position: number; length: number }> = [];
    let range: Range | undefined;
    let pending = 0;

    const fail = (err: unknown): void => {
      if (shared.error === undefined) shared.error = err;
    };
    const settle = (): void => {
      if (pending === 0 && (shared.error !== undefined || (retries.length === 0 && range === undefined))) resolve();
    };
    const nextRequest = (): { range: Range; position: number; length: number } | undefined => {
      const retry = retries.shift();
      if (retry) return retry;
      if (range !== undefined && range.next >= range.end) range = undefined;
      if (range === undefined) {
        range = shared.ranges[shared.taken];
        if (range === undefined) return undefined;
        shared.taken++;
      }
      const length = Math.min(chunk, range.end - range.next);
      const request = { range, position: range.next, length };
      range.next += length;
      return request;
    };
    const onWritten = (buffer: Buffer, request: { range: Range }, bytes: number): void => {
      request.range.received += bytes;
      free.push(buffer);
      pending--;
      progress();
      pump();
    };
    const issue = (request: { range: Range; position: number; length: number }): void => {
      const buffer = free.pop() ?? Buffer.allocUnsafe(chunk);
      pending++;
      const done = (err: Error | undefined, bytes: number): void => {
        if (err || shared.error !== undefined) {
          if (err) fail(readError(err, request.position, shared.size));
          pending--;
          return settle();
        }
        if (bytes === 0) {
          fail(changedError(remotePath, `it ended at byte ${request.position}, ${shared.size} bytes were expected`));
          pending--;
          return settle();
        }
        // A server may answer with less than asked; the rest is asked for again, ahead of new ranges.
        if (bytes < request.length) retries.push({ range: request.range, position: request.position + bytes, length: request.length - bytes });
        file.write(buffer, 0, bytes, request.position).then(
          () => onWritten(buffer, request, bytes),
          (writeErr: unknown) => {
            fail(writeErr);
            pending--;
            settle();
          },
        );
      };
      if (!channelOpen(sftp)) return done(new Error("No response from server: the sftp channel closed"), 0);
      try {
        sftp.read(handle, buffer, 0, request.length, request.position, done);
      } catch (err) {
        done(err instanceof Error ? err : new Error(String(err)), 0);
      }
    };
    const pump = (): void => {
      while (shared.error === undefined && pending < slots) {
        const request = nextRequest();
        if (request === undefined) break;
        issue(request);
      }
      settle();
    };
    pump();
  });
}

/** Not awaited: a close on a stalled connection would only answer when the watchdog tears it down. */
function closeQuietly(sftp: SFTPWrapper, handle: Buffer): void {
  if (channelOpen(sftp)) sftp.close(handle, () => undefined);
}

interface Reader {
  sftp: SFTPWrapper;
  handle: Buffer;
}

/**
 * Downloads `remotePath` into `localPath` over `channels` (at least one),
 * verifying that every range arrived whole and that the file's size did not
 * move while it was read. Returns the size read. The caller owns the channels.
 */
export async function rangedDownload(
  channels: SFTPWrapper[],
  remotePath: string,
  localPath: string,
  options: RangeOptions,
  progress: () => void,
): Promise<number> {
  const opened = await Promise.allSettled(
    channels.map(async (sftp): Promise<Reader> => ({ sftp, handle: await call<Buffer>((cb) => sftp.open(remotePath, "r", cb)) })),
  );
  const readers = opened.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
  const refused = opened.find((o) => o.status === "rejected");
  if (refused !== undefined) {
    for (const { sftp, handle } of readers) closeQuietly(sftp, handle);
    throw refused.reason;
  }
  const [first] = readers;
  if (first === undefined) throw new Error("rangedDownload needs at least one sftp channel");
  const sizeNow = async (): Promise<number> => (await call<{ size: number }>((cb) => first.sftp.fstat(first.handle, cb))).size;
  const file = await open(localPath, "w");
  try {
    const size = await sizeNow();
    const shared: Shared = { size, ranges: planRanges(size, options.rangeSize), taken: 0, error: undefined };
    await Promise.all(
      readers.map(({ sftp, handle }) => {
        const chunk = grantedReadSize(sftp, options.chunkSize);
        const slots = Math.max(2, Math.min(128, Math.ceil(options.bytesInFlight / chunk)));
        return readRanges(sftp, handle, shared, file, chunk, slots, progress, remotePath);
      }),
    );
    if (shared.error !== undefined) throw shared.error;
    const short = shared.ranges.find((r) => r.received !== r.end - r.start);
    if (short) throw changedError(remotePath, `bytes ${short.start}-${short.end} came back with ${short.received} bytes`);
    const after = await sizeNow();
    if (after !== size) throw changedError(remotePath, `its size went from ${size} to ${after} bytes while it was read`);
    return size;
  } finally {
    await file.close();
    for (const { sftp, handle } of readers) closeQuietly(sftp, handle);
  }
}
