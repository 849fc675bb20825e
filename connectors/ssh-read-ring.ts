import type net from "node:net";
import type { Client } from "ssh2";

/*
 * The reads of an SSH connection's socket, into a ring of three 1 MiB slabs
 * reused in turn, where Node would allocate a fresh 64 KiB buffer per read.
 * Those buffers were most of what an SFTP download allocated, and V8 answers
 * that much short-lived memory with a full garbage collection every few
 * megabytes.
 *
 * A slab may only be reused when nothing kept a view of it. ssh2 keeps views
 * of some messages it parses (the key exchange's first message, a file
 * handle in an SFTP answer), but not of channel data, which SFTP channels
 * with `directReads` copy out at once. So the ring watches every message
 * ssh2 parses: one that is not channel data or a window adjustment and lies
 * in a slab takes that slab out of the ring for good (the garbage collector
 * has it once ssh2 lets go). While messages cannot be watched (the
 * handshake, the moment a key exchange puts in a new reader) and after
 * `keepAll`, no slab is reused at all.
 */

const SLAB = 1024 * 1024;
/** A read is offered at least this much room. */
const MIN_READ = 64 * 1024;
/** Three slabs apart, a slab's bytes are long parsed: a packet spans at most two reads. */
const RING = 3;
const CHANNEL_WINDOW_ADJUST = 93;
const CHANNEL_DATA = 94;

interface Reader {
  read(payload: Buffer): Buffer;
}

interface Slab {
  buffer: Buffer;
  /** A view of it may have been kept: it is never reused. */
  kept: boolean;
}

export class SshReadRing {
  private ring: Slab[] = [];
  private readonly slabs = new WeakMap<ArrayBufferLike, Slab>();
  private slab: Slab;
  private used = 0;
  private socket: net.Socket | undefined;
  private packetRW: { read?: unknown } | undefined;
  private readonly watched = new WeakSet<Reader>();
  private reuse = true;

  constructor() {
    this.slab = this.fresh();
  }

  /** The `onread` option of the socket's net.connect. */
  readonly onread = {
    buffer: (): Buffer => this.slab.buffer.subarray(this.used),
    // As Node's own reads: push, and stop reading while the stream's buffer is full.
    callback: (bytes: number, buffer: Uint8Array): boolean => this.received(Buffer.from(buffer.buffer, buffer.byteOffset, bytes)),
  };

  /** The socket the chunks are pushed into. */
  attach(socket: net.Socket): void {
    this.socket = socket;
  }

  /** Starts watching the messages ssh2 parses, once it is connected; without its reader, no slab is ever reused. */
  watch(client: Client): void {
    const packetRW = (client as unknown as { _protocol?: { _packetRW?: { read?: unknown } } })._protocol?._packetRW;
    if (packetRW === undefined || !isReader(packetRW.read)) return this.keepAll();
    this.packetRW = packetRW;
  }

  /** No slab is reused from now on: for a channel whose data ssh2 itself parses (and may keep views of). */
  keepAll(): void {
    this.reuse = false;
    this.keepEverything();
  }

  private received(chunk: Buffer): boolean {
    if (!this.observing()) this.keepEverything();
    this.used += chunk.length;
    const more = this.socket?.push(chunk) ?? false;
    // A key exchange that ended in this chunk put in a reader not yet watched: what it parsed was not seen.
    if (!this.observing()) this.keepEverything();
    if (SLAB - this.used < MIN_READ) this.nextSlab();
    return more;
  }

  /** Whether every message parsed is seen; a new reader of ssh2's is wrapped, and counts as unseen until then. */
  private observing(): boolean {
    const reader = this.packetRW?.read;
    if (!this.reuse || !isReader(reader)) return false;
    if (this.watched.has(reader)) return true;
    const read = reader.read.bind(reader);
    reader.read = (payload: Buffer): Buffer => {
      const type = payload[0];
      if (type !== CHANNEL_DATA && type !== CHANNEL_WINDOW_ADJUST) {
        const slab = this.slabs.get(payload.buffer);
        if (slab !== undefined) slab.kept = true;
      }
      return read(payload);
    };
    this.watched.add(reader);
    return false;
  }

  private keepEverything(): void {
    this.slab.kept = true;
    for (const slab of this.ring) slab.kept = true;
    this.ring = [];
  }

  private nextSlab(): void {
    if (!this.slab.kept) this.ring.push(this.slab);
    const oldest = this.ring.length >= RING ? this.ring.shift() : undefined;
    this.slab = oldest !== undefined && !oldest.kept ? oldest : this.fresh();
    this.used = 0;
  }

  private fresh(): Slab {
    const slab = { buffer: Buffer.allocUnsafe(SLAB), kept: false };
    this.slabs.set(slab.buffer.buffer, slab);
    return slab;
  }
}

function isReader(value: unknown): value is Reader {
  return typeof value === "object" && value !== null && typeof (value as { read?: unknown }).read === "function";
}
