import type { SFTPWrapper } from "ssh2";

/*
 * ssh2 gathers every SFTP answer longer than one SSH packet into a buffer of
 * its own and only then copies a read's bytes into the buffer the read was
 * given. A download of 255 KiB reads thus allocated a fresh 255 KiB buffer per
 * read and copied every byte once more; those short-lived buffers were what
 * drove V8 into a full garbage collection every few dozen megabytes.
 *
 * `directReads` puts a framer in front of the channel's parser: a DATA answer
 * to a read that has its buffer is copied piece by piece, as the SSH packets
 * arrive, straight into that buffer, and the read's callback is called as
 * ssh2 would call it. Every other answer is handed to ssh2's own parser
 * whole, one packet per call, so its state stays at a packet boundary.
 */

const SFTP_DATA = 103;
/** uint32 length, byte type, uint32 request id, uint32 data length. */
const DATA_HEADER = 13;
/** length and type: enough to tell a DATA answer from the others. */
const TYPE_HEADER = 5;

/** What ssh2 keeps per pending request (lib/protocol/SFTP.js, read_). */
interface PendingRead {
  buffer?: Buffer;
  cb?: (err: Error | undefined, buffer: Buffer, bytes: number) => void;
}

/** The parts of ssh2's SFTP channel the framer takes over or calls. */
interface SftpInternals {
  push(data: Buffer | null): unknown;
  _requests: Record<number, PendingRead | undefined>;
  _maxInPktLen: number;
  directReads?: true;
}

function internalsOf(sftp: SFTPWrapper): SftpInternals | undefined {
  const inner = sftp as unknown as Partial<SftpInternals>;
  const ok = typeof inner.push === "function" && typeof inner._requests === "object" && inner._requests !== null && typeof inner._maxInPktLen === "number";
  return ok ? (inner as SftpInternals) : undefined;
}

/**
 * Installs the framer on a channel with nothing in flight (just opened).
 * Returns false, changing nothing, when ssh2's internals are not the ones
 * this was written for: downloads then take ssh2's own path.
 */
export function directReads(sftp: SFTPWrapper): boolean {
  const inner = internalsOf(sftp);
  if (inner === undefined) return false;
  if (inner.directReads) return true;
  const parse = inner.push.bind(inner);
  const header = Buffer.alloc(DATA_HEADER);
  let headerBytes = 0;
  /** Bytes of the current packet, its 4-byte length included. */
  let total = 0;
  /** A packet handed to ssh2 whole, being gathered. */
  let whole: Buffer | undefined;
  let target: { id: number; read: PendingRead; buffer: Buffer; bytes: number } | undefined;
  let at = 0;

  /** Header bytes needed before the packet can be routed: 13 for a DATA answer long enough to have them, else 5. */
  const headerWanted = (): number => {
    if (headerBytes < TYPE_HEADER) return TYPE_HEADER;
    return header[4] === SFTP_DATA && header.readUInt32BE(0) >= DATA_HEADER - 4 ? DATA_HEADER : TYPE_HEADER;
  };

  const startPacket = (): boolean => {
    const length = header.readUInt32BE(0);
    // An impossible length goes to ssh2 as it is, which fails the channel with its own error.
    if (length === 0 || length > inner._maxInPktLen) return false;
    total = length + 4;
    at = headerBytes;
    if (headerBytes === DATA_HEADER) {
      const id = header.readUInt32BE(5);
      const read = inner._requests[id];
      const bytes = header.readUInt32BE(9);
      if (read?.buffer !== undefined && typeof read.cb === "function" && bytes === length - 9 && bytes <= read.buffer.length) {
        target = { id, read, buffer: read.buffer, bytes };
        return true;
      }
    }
    whole = Buffer.allocUnsafe(total);
    header.copy(whole, 0, 0, headerBytes);
    return true;
  };

  const finishPacket = (): void => {
    const done = target;
    const packet = whole;
    target = undefined;
    whole = undefined;
    headerBytes = 0;
    if (done !== undefined) {
      delete inner._requests[done.id];
      done.read.cb?.(undefined, done.buffer, done.bytes);
    } else if (packet !== undefined) {
      parse(packet);
    }
  };

  inner.push = (data: Buffer | null): unknown => {
    if (data === null) return parse(null);
    let p = 0;
    while (p < data.length) {
      if (target === undefined && whole === undefined) {
        const n = Math.min(headerWanted() - headerBytes, data.length - p);
        data.copy(header, headerBytes, p, p + n);
        headerBytes += n;
        p += n;
        if (headerBytes < headerWanted()) continue;
        if (!startPacket()) {
          // ssh2 refuses the length itself and tears the channel down with its own error.
          const bad = Buffer.concat([header.subarray(0, headerBytes), data.subarray(p)]);
          headerBytes = 0;
          return parse(bad);
        }
      }
      const n = Math.min(total - at, data.length - p);
      if (target !== undefined) data.copy(target.buffer, at - DATA_HEADER, p, p + n);
      else if (whole !== undefined) data.copy(whole, at, p, p + n);
      at += n;
      p += n;
      if (at === total) finishPacket();
    }
    return undefined;
  };
  inner.directReads = true;
  return true;
}
