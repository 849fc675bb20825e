import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
}

export type Route = (req: IncomingMessage & { body: Buffer }, res: ServerResponse) => void | Promise<void>;

/**
 * A real node:http server on loopback whose routes each test sets: it plays
 * the supplier's API, token endpoint or receiving end, and misbehaves on
 * purpose where a test injects a fault. Bodies of non-streaming routes are
 * collected; routes under `/stream/` get the raw request instead.
 */
export class FeedServer {
  readonly routes = new Map<string, Route>();
  readonly seen: SeenRequest[] = [];
  private server: Server | undefined;
  port = 0;

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const pathname = new URL(req.url ?? "/", "http://x").pathname;
      const route = this.routes.get(pathname);
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("error", () => undefined);
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        this.seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
        if (!route) {
          res.writeHead(404).end("no route");
          return;
        }
        Promise.resolve(route(Object.assign(req, { body }), res)).catch((err: unknown) => {
          res.destroy(err as Error);
        });
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  json(path: string, handler: (req: IncomingMessage & { body: Buffer }) => { status?: number; body: unknown; headers?: Record<string, string> }): void {
    this.routes.set(path, (req, res) => {
      const out = handler(req);
      res.writeHead(out.status ?? 200, { "content-type": "application/json", ...out.headers });
      res.end(JSON.stringify(out.body));
    });
  }
}
