import net from "node:net";

/*
 * The reads of a plain TCP data socket into reused 1 MiB slabs, for a
 * consumer that says when it is done with each chunk (FileSink, once the
 * chunk is on disk). Node would allocate a fresh 64 KiB buffer per read,
 * and V8 answers that stream of short-lived memory with full garbage
 * collections, a large share of an FTP download's CPU.
 *
 * Chunks are pushed into the socket's stream as Node's own reads are, so
 * data that arrives before the transfer's pipe is attached waits in the
 * stream. A slab is reused only when every chunk read into it has been released; a
 * chunk that is never released (a consumer that keeps it) keeps its slab out
 * of use, and the garbage collector has it once nothing refers to it.
 */

const SLAB = 1024 * 1024;
const MIN_READ = 64 * 1024;
/** Slabs kept for reuse; more in use at once only when the consumer holds more than this. */
const POOL = 4;

interface Slab {
  buffer: Buffer;
  /** Chunks read into it and not yet released. */
  pending: number;
}

export class ReleasedReads {
  private readonly pool: Slab[] = [];
  private readonly slabs = new WeakMap<ArrayBufferLike, Slab>();
  private slab: Slab;
  private used = 0;
  private socket: net.Socket | undefined;
  /** Slabs allocated so far: a test sees them reused. */
  slabsAllocated = 0;

  constructor() {
    this.slab = this.fresh();
  }

  /** A socket that reads into the slabs and emits each chunk as `data`, as a socket without `onread` would. */
  newSocket(): net.Socket {
    const socket = new net.Socket({
      onread: {
        buffer: () => this.slab.buffer.subarray(this.used),
        // As Node's own reads: push, and stop reading while the stream's buffer is full.
        callback: (bytes, buffer) => this.received(Buffer.from(buffer.buffer, buffer.byteOffset, bytes)),
      },
    });
    this.socket = socket;
    return socket;
  }

  /** The consumer is done with `chunk`; a chunk from elsewhere is ignored. */
  release(chunk: Uint8Array): void {
    const slab = this.slabs.get(chunk.buffer);
    if (slab !== undefined) slab.pending--;
  }

  private received(chunk: Buffer): boolean {
    this.used += chunk.length;
    this.slab.pending++;
    if (SLAB - this.used < MIN_READ) this.nextSlab();
    return this.socket?.push(chunk) ?? false;
  }

  private nextSlab(): void {
    if (this.pool.length < POOL && !this.pool.includes(this.slab)) this.pool.push(this.slab);
    const free = this.pool.find((s) => s.pending === 0 && s !== this.slab);
    this.slab = free ?? this.fresh();
    this.used = 0;
  }

  private fresh(): Slab {
    const slab = { buffer: Buffer.allocUnsafe(SLAB), pending: 0 };
    this.slabsAllocated++;
    this.slabs.set(slab.buffer.buffer, slab);
    return slab;
  }
}
