import net from "node:net";

/**
 * A loopback TCP relay between a client and a real server that can misbehave
 * on purpose: cut every connection after N more bytes in one direction
 * ("dropped connection mid-transfer"), or stop relaying while keeping the
 * sockets open ("slow server").
 */
export type Direction = "down" | "up";

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
}

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly pairs = new Set<Pair>();
  private dropAfter: { direction: Direction; remaining: number; every: number | undefined } | undefined;
  private stalled = false;
  /** Connections accepted since start, for "how many times did it connect". */
  connections = 0;
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly targetHost = "127.0.0.1",
  ) {}

  async start(): Promise<this> {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    if (address === null || typeof address === "string") throw new Error("proxy has no port");
    this.port = address.port;
    return this;
  }

  private accept(client: net.Socket): void {
    this.connections++;
    const upstream = net.connect(this.targetPort, this.targetHost);
    const pair = { client, upstream };
    this.pairs.add(pair);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.on("data", (chunk: Buffer) => this.relay(pair, "up", chunk));
    upstream.on("data", (chunk: Buffer) => this.relay(pair, "down", chunk));
    if (this.stalled) {
      client.pause();
      upstream.pause();
    }
  }

  private relay(pair: Pair, direction: Direction, chunk: Buffer): void {
    const to = direction === "down" ? pair.client : pair.upstream;
    const from = direction === "down" ? pair.upstream : pair.client;
    const drop = this.dropAfter;
    if (drop && drop.direction === direction) {
      if (chunk.length >= drop.remaining) {
        to.write(chunk.subarray(0, drop.remaining));
        // `every`: a connector that retries on its own meets the same broken link each time.
        this.dropAfter = drop.every === undefined ? undefined : { ...drop, remaining: drop.every };
        // A reset, not a clean close: what a crashed server or a broken link looks like.
        pair.client.resetAndDestroy();
        pair.upstream.resetAndDestroy();
        return;
      }
      drop.remaining -= chunk.length;
    }
    if (!to.write(chunk)) {
      from.pause();
      to.once("drain", () => {
        if (!this.stalled) from.resume();
      });
    }
  }

  /**
   * The next `bytes` in `direction` pass, then every open connection is reset;
   * with `repeat`, so is each later one after as many bytes, until heal().
   */
  cutAfter(bytes: number, direction: Direction = "down", repeat = false): void {
    this.dropAfter = { direction, remaining: bytes, every: repeat ? bytes : undefined };
  }

  /** Stop relaying in both directions; sockets stay open, so only a timeout notices. */
  stall(): void {
    this.stalled = true;
    for (const { client, upstream } of this.pairs) {
      client.pause();
      upstream.pause();
    }
  }

  heal(): void {
    this.stalled = false;
    this.dropAfter = undefined;
    for (const { client, upstream } of this.pairs) {
      client.resume();
      upstream.resume();
    }
  }

  async close(): Promise<void> {
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
