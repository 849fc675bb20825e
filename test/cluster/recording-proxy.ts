import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Seen {
  at: number;
  method: string;
  url: string;
  status: number;
}

/**
 * A pass-through HTTP proxy in front of the service that notes every request's
 * arrival time, method and answer status, so a test counts what the service got.
 */
export async function startRecordingProxy(target: string): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const upstream = new URL(target);
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const at = Date.now();
    const out = http.request(
      { hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        seen.push({ at, method: req.method ?? "GET", url: req.url ?? "", status: answer.statusCode ?? 0 });
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => {
      seen.push({ at, method: req.method ?? "GET", url: req.url ?? "", status: 502 });
      res.destroy();
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
