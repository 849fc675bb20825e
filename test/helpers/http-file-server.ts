import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pipeline } from "node:stream/promises";

/**
 * A real node:http file server on loopback with basic auth: GET streams
 * `<root>/<path>`, PUT/POST streams the body to a hidden `.name.part` and
 * renames it only once every announced byte arrived, as a careful receiving
 * end does. It plays the supplier's feed and the customer's upload endpoint
 * for the http conformance target.
 */
export class HttpFileServer {
  private server: Server | undefined;
  port = 0;
  /** Requests that carried credentials (right or wrong): a wrong password must be sent once. */
  authAttempts = 0;

  constructor(
    private readonly root: string,
    private readonly user: { username: string; password: string },
  ) {}

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch(() => res.destroy());
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  private authorized(req: IncomingMessage): boolean {
    const header = req.headers.authorization ?? "";
    if (header) this.authAttempts++;
    const expected = `Basic ${Buffer.from(`${this.user.username}:${this.user.password}`).toString("base64")}`;
    return header === expected;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.authorized(req)) {
      res.writeHead(401, { "www-authenticate": 'Basic realm="files"' }).end("wrong user or password");
      return;
    }
    const rel = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).replace(/^\/+/, "");
    const file = path.resolve(this.root, rel);
    if (!file.startsWith(`${path.resolve(this.root)}${path.sep}`)) {
      res.writeHead(403).end("outside the served folder");
      return;
    }
    if (req.method === "GET") return this.serve(file, res);
    if (req.method === "PUT" || req.method === "POST") return this.receive(file, req, res);
    res.writeHead(405).end("method not allowed");
  }

  private async serve(file: string, res: ServerResponse): Promise<void> {
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) {
      res.writeHead(404).end("no such file");
      return;
    }
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(info.size) });
    await pipeline(createReadStream(file), res);
  }

  private async receive(file: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const part = path.join(path.dirname(file), `.${path.basename(file)}.part`);
    await mkdir(path.dirname(file), { recursive: true });
    try {
      await pipeline(req, createWriteStream(part));
      const announced = Number(req.headers["content-length"] ?? NaN);
      const got = (await stat(part)).size;
      if (Number.isFinite(announced) && got !== announced) throw new Error(`got ${got} of ${announced} bytes`);
      await rename(part, file);
      res.writeHead(201).end("stored");
    } catch (err) {
      await rm(part, { force: true });
      throw err;
    }
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
