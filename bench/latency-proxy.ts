/**
 * A TCP relay on loopback that delays each direction by N ms (default 20, so
 * 40 ms round trip), for measuring transfers at a distant server's latency.
 * It delays, it does not throttle: every chunk is stamped on arrival and
 * released N ms later, in order, so a sender with enough data in flight still
 * gets the full loopback throughput.
 *
 * Run alone: `tsx bench/latency-proxy.ts <target port> [delay ms]` prints
 * `{"port":N}` and relays until stdin closes. The bench starts it that way so
 * its CPU time is not spent on the measured process's event loop.
 */
import net from "node:net";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

/** Past this many bytes waiting in one direction the source is paused: memory stays bounded, a live window never gets near it. */
const PAUSE_BYTES = 64 * 1024 * 1024;

interface Stamped {
  due: number;
  chunk: Buffer;
}

/** One direction of one connection: chunks wait in arrival order until due. */
class DelayedPipe {
  private readonly queue: Stamped[] = [];
  private head = 0;
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    private readonly from: net.Socket,
    private readonly to: net.Socket,
    private readonly delayMs: number,
  ) {
    from.on("data", (chunk: Buffer) => this.push(chunk));
    from.on("end", () => {
      this.ended = true;
      this.schedule();
    });
    to.on("drain", () => this.maybeResume());
  }

  private push(chunk: Buffer): void {
    this.queue.push({ due: performance.now() + this.delayMs, chunk });
    this.queued += chunk.length;
    if (this.queued + this.to.writableLength > PAUSE_BYTES) this.from.pause();
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    const next = this.queue[this.head];
    if (next === undefined) {
      // The FIN travels with the same delay as the data before it.
      if (this.ended) this.to.end();
      return;
    }
    this.timer = setTimeout(() => this.release(), Math.max(0, next.due - performance.now()));
  }

  private release(): void {
    this.timer = undefined;
    const now = performance.now();
    // setTimeout fires late by up to a millisecond or two: everything due by now goes in one write.
    this.to.cork();
    for (let next = this.queue[this.head]; next !== undefined && next.due <= now + 0.5; next = this.queue[this.head]) {
      this.to.write(next.chunk);
      this.queued -= next.chunk.length;
      this.head++;
    }
    this.to.uncork();
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.maybeResume();
    this.schedule();
  }

  private maybeResume(): void {
    if (this.from.isPaused() && this.queued + this.to.writableLength <= PAUSE_BYTES / 2) this.from.resume();
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

export class LatencyProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly delayMs = 20,
    private readonly targetHost = "127.0.0.1",
  ) {}

  async start(): Promise<this> {
    // Half-open: one side's FIN must wait its delay behind the data before it, not close the other direction at once.
    const server = net.createServer({ allowHalfOpen: true }, (client) => this.accept(client));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("latency proxy has no port");
    this.port = address.port;
    return this;
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect({ port: this.targetPort, host: this.targetHost, allowHalfOpen: true });
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      this.sockets.add(socket);
    }
    const up = new DelayedPipe(client, upstream, this.delayMs);
    const down = new DelayedPipe(upstream, client, this.delayMs);
    const forget = (socket: net.Socket): void => void this.sockets.delete(socket);
    const fail = (): void => {
      up.stop();
      down.stop();
      client.destroy();
      upstream.destroy();
    };
    // A clean close travels as a delayed FIN (DelayedPipe ends its target); only a reset tears both down at once.
    client.on("error", fail).on("close", () => forget(client));
    upstream.on("error", fail).on("close", () => forget(upstream));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

async function main(): Promise<void> {
  const target = Number(process.argv[2]);
  const delay = Number(process.argv[3] ?? 20);
  if (!Number.isInteger(target) || target <= 0 || !(delay >= 0)) {
    console.error("usage: latency-proxy.ts <target port> [delay ms per direction, default 20]");
    process.exit(2);
  }
  const proxy = await new LatencyProxy(target, delay).start();
  process.stdout.write(`${JSON.stringify({ port: proxy.port })}\n`);
  process.stdin.resume();
  process.stdin.on("end", () => void proxy.close().then(() => process.exit(0)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
