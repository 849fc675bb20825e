import { open } from "node:fs/promises";
import type { SFTPWrapper } from "ssh2";
import { ConveyorError } from "../src/errors.js";
import { channelOpen, RangeReader, type Range, type Shared } from "./sftp-range-reader.js";

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
 * Memory stays flat: each channel reuses a small pool of chunk buffers, one
 * returning to the pool only once its positioned write has finished.
 */

export interface RangeOptions {
  /** Bytes per read request; capped by what the server grants (OpenSSH: 255 KiB). */
  chunkSize: number;
  /** Bytes a channel keeps requested ahead (rounded to whole chunks, at least 2, at most 128). */
  bytesInFlight: number;
  /** Bytes a channel reads in sequence before it takes the next range. */
  rangeSize: number;
  /** Contiguous bytes a channel gathers into one write. */
  writeBatch: number;
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

function call<T>(fn: (cb: (err: Error | null | undefined, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));
}

/** Not awaited: a close on a stalled connection would only answer when the watchdog tears it down. */
function closeQuietly(sftp: SFTPWrapper, handle: Buffer): void {
  if (channelOpen(sftp)) sftp.close(handle, () => undefined);
}

interface Reader {
  sftp: SFTPWrapper;
  handle: Buffer;
}

/** More channels for a download: `open` asks for one, at most `count` times. */
export interface ExtraChannels {
  open(): Promise<SFTPWrapper>;
  count: number;
}

/** Channels asked for at once: each is a process the server starts, and a server on few cores sets them up in turn. */
const OPENING_AT_ONCE = 2;

/**
 * Downloads `remotePath` into `localPath` over `first` and the channels
 * `extra` opens, verifying that every range arrived whole and that the
 * file's size did not move while it was read. Returns the size read.
 *
 * The download starts on `first` at once; the others are asked for a few at
 * a time while ranges are left, and each takes ranges from when it opens. A
 * server may take long to set up a channel (an sftp-server behind the
 * account's shell and its start-up files): waiting for every channel before
 * the first read held a download up by seconds, and asking for all at once
 * had the server start them side by side. A refused channel ends the asking
 * (the server's cap). The caller owns the channels `open` gave, those that
 * open after the download too.
 */
export async function rangedDownload(
  first: SFTPWrapper,
  extra: ExtraChannels,
  remotePath: string,
  localPath: string,
  options: RangeOptions,
  progress: () => void,
): Promise<number> {
  const openHandle = (sftp: SFTPWrapper): Promise<Buffer> => call<Buffer>((cb) => sftp.open(remotePath, "r", cb));
  const firstHandle = await openHandle(first);
  const readers: Reader[] = [{ sftp: first, handle: firstHandle }];
  let finished = false;
  const sizeNow = async (): Promise<number> => (await call<{ size: number }>((cb) => first.fstat(firstHandle, cb))).size;
  const file = await open(localPath, "w");
  try {
    const size = await sizeNow();
    const shared: Shared = { size, ranges: planRanges(size, options.rangeSize), taken: 0, error: undefined };
    const ended = (position: number): Error => changedError(remotePath, `it ended at byte ${position}, ${size} bytes were expected`);
    const readFailed = (err: Error, position: number): Error => readError(err, position, size);
    const idle = (): boolean => finished || shared.error !== undefined || shared.taken >= shared.ranges.length;
    const read = ({ sftp, handle }: Reader): Promise<void> => {
      const chunk = grantedReadSize(sftp, options.chunkSize);
      const slots = Math.max(2, Math.min(128, Math.ceil(options.bytesInFlight / chunk)));
      return new RangeReader(shared, { sftp, handle, file, chunk, slots, writeBatch: options.writeBatch, progress, ended, readFailed }).read();
    };
    const reading = [read({ sftp: first, handle: firstHandle })];
    let asked = 0;
    const join = async (): Promise<void> => {
      while (asked < extra.count && !idle()) {
        asked++;
        const sftp = await extra.open();
        if (idle()) return;
        const handle = await openHandle(sftp);
        readers.push({ sftp, handle });
        // Started in the same turn as the check: once `first` is done and every range taken, no reader starts.
        if (!idle()) reading.push(read({ sftp, handle }));
        else if (finished) closeQuietly(sftp, handle);
      }
    };
    for (let k = 0; k < OPENING_AT_ONCE; k++) {
      join().catch(() => {
        asked = extra.count;
      });
    }
    // A reader resolves once nothing of its own is in flight; the first one resolves only once no range is left to take.
    for (let i = 0; i < reading.length; i++) await reading[i];
    if (shared.error !== undefined) throw shared.error;
    const short = shared.ranges.find((r) => r.received !== r.end - r.start);
    if (short) throw changedError(remotePath, `bytes ${short.start}-${short.end} came back with ${short.received} bytes`);
    const after = await sizeNow();
    if (after !== size) throw changedError(remotePath, `its size went from ${size} to ${after} bytes while it was read`);
    return size;
  } finally {
    finished = true;
    await file.close();
    for (const { sftp, handle } of readers) closeQuietly(sftp, handle);
  }
}
