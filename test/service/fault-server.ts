import { createHash } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A node:http server that misbehaves on purpose: each test gives the handler
 * that injects its fault (503s, dropped sockets, 429s). It records every
 * request it received, with the time it arrived.
 */
export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

export type FaultHandler = (req: Received, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

export interface FaultServer {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

export async function startFaultServer(handler: FaultHandler): Promise<FaultServer> {
  const received: Received[] = [];
  const server = http.createServer((raw, res) => {
    const chunks: Buffer[] = [];
    raw.on("data", (chunk: Buffer) => chunks.push(chunk));
    raw.on("end", () => {
      const req: Received = { method: raw.method ?? "GET", path: raw.url ?? "/", headers: raw.headers, body: Buffer.concat(chunks), at: Date.now() };
      received.push(req);
      Promise.resolve(handler(req, res, raw)).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** The named fields and the file of a multipart body, parsed only as far as these tests need. */
export function multipartFields(req: Received): { fields: Record<string, string>; file?: Buffer } {
  const type = String(req.headers["content-type"] ?? "");
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(type);
  const marker = `--${boundary?.[1] ?? boundary?.[2] ?? ""}`;
  const fields: Record<string, string> = {};
  let file: Buffer | undefined;
  const text = req.body.toString("latin1");
  for (const part of text.split(marker).slice(1, -1)) {
    const split = part.indexOf("\r\n\r\n");
    const head = part.slice(0, split);
    const content = Buffer.from(part.slice(split + 4, part.length - 2), "latin1");
    const name = /name="([^"]+)"/.exec(head)?.[1] ?? "";
    if (/filename=/.test(head)) file = content;
    else fields[name] = content.toString("utf8");
  }
  return file ? { fields, file } : { fields };
}

export function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}
