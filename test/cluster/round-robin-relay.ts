import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Relay {
  url: string;
  /** Where requests go, in turn; set once the daemons listen. */
  targets: string[];
  /** Requests forwarded to each target, by its URL. */
  counts: Map<string, number>;
  close(): Promise<void>;
}

/**
 * A stand-in for the load balancer in front of a cluster: each HTTP request
 * (not each connection, which the service's keep-alive would pin to one
 * daemon) goes to the next target, headers and raw body as they came, and
 * the target's answer goes back as it came.
 */
export async function startRelay(): Promise<Relay> {
  let next = 0;
  const relay: Relay = { url: "", targets: [], counts: new Map(), close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const target = relay.targets[next++ % Math.max(1, relay.targets.length)];
      if (!target) {
        res.writeHead(503).end();
        return;
      }
      relay.counts.set(target, (relay.counts.get(target) ?? 0) + 1);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "connection" && k !== "content-length") headers[k] = v;
      const body = Buffer.concat(chunks);
      fetch(`${target}${req.url ?? "/"}`, { method: req.method ?? "GET", headers, ...(body.length > 0 ? { body } : {}) })
        .then(async (answer) => {
          const payload = Buffer.from(await answer.arrayBuffer());
          res.writeHead(answer.status, { "Content-Type": answer.headers.get("content-type") ?? "application/octet-stream" }).end(payload);
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  relay.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  relay.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return relay;
}
