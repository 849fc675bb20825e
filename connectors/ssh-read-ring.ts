import type net from "node:net";
import type { Client } from "ssh2";

/*
 * The reads of an SSH connection's socket, into a ring of three 1 MiB slabs
 * reused in turn, where Node would allocate a fresh 64 KiB buffer per read.
 * Those buffers were most of what an SFTP download allocated, and V8 answers
 * that much short-lived memory with a full garbage collection every few
 * megabytes: reusing the slabs took the client's CPU per byte down by about
 * a third, and its peak memory with it.
 *
 * A slab may only be reused when nothing kept a view of it. ssh2 keeps views
 * of some messages it parses (the key exchange's first message, a file
 * handle in an SFTP answer), but not of channel data, which SFTP channels
 * with `directReads` copy out at once. So the ring watches the type of every
 * message ssh2 parses, and a slab that carried anything but channel data and
 * window adjustments is never reused: it is left to the garbage collector and
 * a fresh slab takes its place. Until `watch` is called (the handshake), and
 * after `keepAll`, no slab is reused at all.
 */

const SLAB = 1024 * 1024;
/** A read is offered at least this much room; a packet is at most 35,000 bytes. */
const MIN_READ = 64 * 1024;
const RING = 3;
const CHANNEL_WINDOW_ADJUST = 93;
const CHANNEL_DATA = 94;

interface Reader {
  read(payload: Buffer): Buffer;
}

interface Slab {
  buffer: Buffer;
  /** A view of it may have been kept: it leaves the ring. */
  kept: boolean;
}

export class SshReadRing {
  private readonly ring: Slab[] = [];
  private slab: Slab = { buffer: Buffer.allocUnsafe(SLAB), kept: false };
  private previous: Slab | undefined;
  private used = 0;
  private socket: net.Socket | undefined;
  private packetRW: { read?: Reader } | undefined;
  private readonly watched = new WeakSet<Reader>();
  private tainted = false;
  private reuse = true;

  /** The `onread` option of the socket's net.connect. */
  readonly onread = {
    buffer: (): Buffer => this.slab.buffer.subarray(this.used),
    callback: (bytes: number, buffer: Uint8Array): boolean => {
      this.received(Buffer.from(buffer.buffer, buffer.byteOffset, bytes));
      // Keep reading: ssh2 puts no back-pressure on its socket's reads either.
      return true;
    },
  };

  /** The socket the chunks are emitted on as `data`, as a socket without `onread` would. */
  attach(socket: net.Socket): void {
    this.socket = socket;
  }

  /** Starts reusing slabs once ssh2's reader of parsed messages can be watched; never when it cannot. */
  watch(client: Client): void {
    const protocol = (client as unknown as { _protocol?: { _packetRW?: { read?: unknown } } })._protocol;
    const packetRW = protocol?._packetRW;
    if (packetRW === undefined || !isReader(packetRW.read)) return this.keepAll();
    this.packetRW = packetRW as { read?: Reader };
  }

  /** No slab is reused from now on: for a channel whose data ssh2 itself parses (and may keep views of). */
  keepAll(): void {
    this.reuse = false;
  }

  private received(chunk: Buffer): void {
    const start = this.used;
    this.used += chunk.length;
    this.tainted = !this.observing();
    this.socket?.emit("data", chunk);
    if (this.tainted || !this.observing()) {
      this.slab.kept = true;
      // A packet read whole in one chunk and its tag in the next is parsed as a view of the one before.
      if (start < MIN_READ && this.previous) this.previous.kept = true;
    }
    if (SLAB - this.used < MIN_READ) this.nextSlab();
  }

  /**
   * Whether every message parsed is seen. ssh2 puts a new reader in place at
   * each key exchange's end; the new one is wrapped and the chunk that
   * brought the change counts as unseen.
   */
  private observing(): boolean {
    const reader = this.packetRW?.read;
    if (!this.reuse || reader === undefined || !isReader(reader)) return false;
    if (this.watched.has(reader)) return true;
    const read = reader.read.bind(reader);
    reader.read = (payload: Buffer): Buffer => {
      const type = payload[0];
      if (type !== CHANNEL_DATA && type !== CHANNEL_WINDOW_ADJUST) this.tainted = true;
      return read(payload);
    };
    this.watched.add(reader);
    return false;
  }

  private nextSlab(): void {
    if (!this.slab.kept) this.ring.push(this.slab);
    this.previous = this.slab;
    // Three slabs apart, a slab's last views (a packet spans at most two reads) are long parsed.
    const oldest = this.ring.length >= RING ? this.ring.shift() : undefined;
    this.slab = oldest !== undefined && !oldest.kept ? oldest : { buffer: Buffer.allocUnsafe(SLAB), kept: false };
    this.used = 0;
  }
}

function isReader(value: unknown): value is Reader {
  return typeof value === "object" && value !== null && typeof (value as { read?: unknown }).read === "function";
}
