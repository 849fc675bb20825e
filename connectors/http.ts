import { createReadStream, createWriteStream } from "node:fs";
import { rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ConveyorError } from "../src/errors.js";
import type { ConnectorContext, ConnectorFactory, ConnectorParts, RecordSendResult, RemoteFile, TransferResult } from "./types.js";
import { HttpExchange, type HttpConnection, type HttpConnectorOptions } from "./http-exchange.js";
import { nextFromBody, nextFromLink, pageRecords, PageTrail } from "./http-paginate.js";
import { classifyNetworkError, readSnippet, safeUrl } from "./http-client.js";
import { requestBody } from "./rendered-body.js";
import { runtimeRefs } from "./http-refs.js";
import { runTriggers, triggerMethod, triggerRequest } from "./http-triggers.js";

const CONTENT_TYPES: Record<string, string> = {
  ".csv": "text/csv",
  ".tsv": "text/tab-separated-values",
  ".txt": "text/plain",
  ".json": "application/json",
  ".xml": "application/xml",
  ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ".zip": "application/zip",
  ".gz": "application/gzip",
};

export function contentTypeFor(name: string): string {
  return CONTENT_TYPES[path.extname(name).toLowerCase()] ?? "application/octet-stream";
}

/**
 * The name an http feed is known by: the URL's last segment when it looks like
 * a file, else `response.json`. An address a trigger's value decides is not
 * known before the run: `response`, so the format is told by the content.
 */
export function feedName(address: string): string {
  if (runtimeRefs(address).some((r) => r.kind === "trigger")) return "response";
  try {
    const last = decodeURIComponent(new URL(address).pathname.split("/").pop() ?? "");
    if (/^[\w.-]+\.[A-Za-z0-9]{1,5}$/.test(last)) return last;
  } catch {
    // an unparsable address is reported when it is used
  }
  return "response.json";
}

async function writeChunk(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await new Promise<void>((resolve, reject) => {
    out.once("drain", resolve);
    out.once("error", reject);
  });
}

/**
 * The http connection: an import downloads one virtual file (following pages
 * into one JSON array when `paginate` is set), an export sends the file, or
 * one request per record with `payload_multi: 0`. Its `triggers` run first,
 * once per connector.
 */
export class HttpConnector implements ConnectorParts {
  readonly type = "http" as const;
  private readonly ex: HttpExchange;
  private triggered = false;

  constructor(private readonly conn: HttpConnection, private readonly ctx: ConnectorContext, options: HttpConnectorOptions = {}) {
    this.ex = new HttpExchange(conn, ctx, options);
  }

  async list(): Promise<RemoteFile[]> {
    const name = feedName(this.ex.rawAddress);
    // A feed answered on request has no upload time: null keeps min_age from holding it back.
    return [{ name, path: name, size: 0, modified: null, generated: true, ref: safeUrl(this.ex.rawAddress) }];
  }

  /** The triggers, before the first final request; their values stay for the connector's later requests. */
  private async trigger(): Promise<void> {
    if (this.triggered) return;
    await runTriggers(this.ex);
    this.triggered = true;
  }

  async download(_file: RemoteFile, localPath: string): Promise<TransferResult> {
    const part = `${localPath}.part`;
    try {
      await this.trigger();
      await this.ex.withRetry(() => (this.conn.paginate ? this.downloadPages(part) : this.downloadOne(part)));
      await rename(part, localPath);
      return { size: (await stat(localPath)).size };
    } catch (err) {
      await rm(part, { force: true });
      throw err;
    }
  }

  private async downloadOne(part: string): Promise<void> {
    const res = await this.ex.send(() => this.ex.importRequest());
    try {
      await pipeline(res.body, createWriteStream(part));
    } catch (err) {
      throw classifyNetworkError(err, this.ex.address);
    }
  }

  private async downloadPages(part: string): Promise<void> {
    const out = createWriteStream(part);
    const done = new Promise<void>((resolve, reject) => {
      out.once("finish", resolve);
      out.once("error", reject);
    });
    const trail = new PageTrail();
    const first = this.ex.importRequest().url;
    let url: string | undefined = first;
    let count = 0;
    let current: string | undefined;
    try {
      await writeChunk(out, "[");
      while (url) {
        const pageUrl: string = url;
        current = pageUrl;
        trail.visit(pageUrl);
        const res = await this.ex.send(() => this.ex.importRequest(pageUrl));
        const text = await readSnippetFull(res.body);
        let page: unknown;
        try {
          page = JSON.parse(text);
        } catch (err) {
          throw new ConveyorError("file_format", `page ${safeUrl(pageUrl)} is not JSON: ${(err as Error).message}`, { hint: "paginate works with JSON feeds only" });
        }
        const records = pageRecords(page, this.conn.pagination);
        for (const record of records) await writeChunk(out, `${count++ === 0 ? "\n" : ",\n"}${JSON.stringify(record)}`);
        const linkNext = nextFromLink(res.headers.link, pageUrl);
        url = this.conn.pagination ? nextFromBody(page, this.conn.pagination, pageUrl, first) : linkNext;
        if (this.conn.pagination && !url) url = linkNext;
        if (records.length === 0) url = undefined;
      }
      await writeChunk(out, "\n]\n");
      out.end();
      await done;
    } catch (err) {
      // Nobody waits for the file any more; its own late errors must not surface.
      done.catch(() => undefined);
      out.destroy();
      throw classifyNetworkError(err, current ?? first);
    }
  }

  async upload(localPath: string, remoteName: string): Promise<TransferResult> {
    const size = (await stat(localPath)).size;
    await this.trigger();
    const res = await this.ex.withRetry(() =>
      this.ex.send(() => ({
        method: this.ex.method,
        url: this.ex.address,
        headers: {
          "content-type": contentTypeFor(remoteName),
          "content-length": String(size),
          "content-disposition": `attachment; filename="${remoteName.replace(/["\\\r\n]/g, "_")}"`,
        },
        body: createReadStream(localPath),
      })),
    );
    await readSnippet(res.body);
    return { size };
  }

  async sendRecords(records: readonly unknown[]): Promise<RecordSendResult[]> {
    const results: RecordSendResult[] = [];
    await this.trigger();
    for (const [index, record] of records.entries()) {
      try {
        const { body, headers } = requestBody(record, this.conn.headers);
        const res = await this.ex.withRetry(() => this.ex.send(() => ({ method: this.ex.method, url: this.ex.address, headers, body })));
        await readSnippet(res.body);
        results.push({ index, ok: true, status: res.status });
      } catch (err) {
        const e = err instanceof ConveyorError ? err : new ConveyorError("transfer", String(err));
        const status = typeof e.details.status === "number" ? e.details.status : undefined;
        results.push({ index, ok: false, ...(status === undefined ? {} : { status }), error: e.message });
        if (e.code === "auth" || e.code === "private_host" || e.code === "canceled") throw e;
      }
    }
    return results;
  }

  /**
   * The connection test sends nothing that changes anything: a GET of the
   * address (or of the first trigger's, when there are triggers: a later one's
   * needs values only a run finds), otherwise a HEAD.
   */
  async test(): Promise<{ ok: true; facts: Record<string, string> }> {
    const first = this.conn.triggers?.[0];
    const safe = (first ? triggerMethod(first) : this.ex.method) === "GET";
    const request = first ? triggerRequest(this.ex, first, "connection.triggers[0]") : undefined;
    const url = request?.make().url;
    const probe = () => (url ? { method: safe ? "GET" : "HEAD", url } : safe ? this.ex.importRequest() : { method: "HEAD", url: this.ex.address });
    // The first trigger's own headers, and not the connection's that need a trigger value (there is none yet).
    const res = await this.ex.withRetry(() => this.ex.send(probe, request?.own)).catch((err: unknown) => {
      // A HEAD the server does not know still proves the address and the credentials.
      if (!safe && err instanceof ConveyorError && (err.code === "protocol" || err.code === "not_found")) return undefined;
      throw err;
    });
    if (res) await readSnippet(res.body);
    const triggers: Record<string, string> = this.conn.triggers?.length ? { triggers: String(this.conn.triggers.length) } : {};
    return { ok: true, facts: { address: safeUrl(url ?? this.ex.address), auth: this.ex.auth.kind, ...triggers, ...(res ? { status: String(res.status) } : {}) } };
  }

  async close(): Promise<void> {
    await this.ex.close();
  }
}

/** One page whole: pages are small by nature, and JSON cannot be cut between records without a parser. */
async function readSnippetFull(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

export const createHttpConnector: ConnectorFactory = (connection, context) => new HttpConnector(connection, context);
