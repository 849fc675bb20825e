import { ConveyorError } from "../src/errors.js";
import { isSecretHeader, isSecretParam, registerSecret, registerUrlSecrets } from "../src/secrets.js";
import { CONNECT_RETRY, withRetry, type RetryPolicy } from "../src/retry.js";
import type { ConnectorContext } from "./types.js";
import type { HttpConnection } from "./http-connection.js";

export type { HttpConnection } from "./http-connection.js";
import { HttpClient, readSnippet, statusError, type HttpRequest, type HttpResponse } from "./http-client.js";
import { HttpAuth } from "./http-auth.js";

export interface HttpConnectorOptions {
  /** Longest wait for an answer or for the next chunk of one (default 60 s). */
  timeoutMs?: number;
  /** Overrides the connect retry (tests shorten the backoff). */
  retry?: Partial<RetryPolicy>;
}

/** Query-string form of a payload: nested values are sent as JSON text. */
export function payloadQuery(payload: Record<string, unknown> | undefined): URLSearchParams {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(payload ?? {})) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const item of v) params.append(k, typeof item === "object" ? JSON.stringify(item) : String(item));
    else params.append(k, typeof v === "object" ? JSON.stringify(v) : String(v));
  }
  return params;
}

/**
 * One http connection's way of talking to its server: the address, the
 * configured headers, the authorization, a single refresh after a 401, and
 * the connect retry. The connector's import and export sides share it.
 */
export class HttpExchange {
  readonly client: HttpClient;
  readonly auth: HttpAuth;
  readonly method: string;
  private readonly retry: RetryPolicy;

  constructor(
    readonly conn: HttpConnection,
    readonly ctx: ConnectorContext,
    options: HttpConnectorOptions = {},
  ) {
    for (const [k, v] of Object.entries(conn.headers ?? {})) if (isSecretHeader(k)) registerSecret(v);
    for (const [k, v] of Object.entries(conn.payload ?? {})) if (isSecretParam(k)) registerSecret(v);
    for (const address of [conn.address ?? []].flat()) registerUrlSecrets(address);
    this.client = new HttpClient({
      allowPrivateHosts: ctx.settings.allowPrivateHosts === true,
      validate: conn.validate !== false,
      timeoutMs: options.timeoutMs ?? 60_000,
      logger: ctx.logger,
      verbose: ctx.verbose ?? false,
      signal: ctx.signal,
    });
    this.auth = new HttpAuth(conn, ctx, this.client);
    this.method = (conn.method ?? "POST").toUpperCase();
    this.retry = {
      ...CONNECT_RETRY,
      ...options.retry,
      signal: ctx.signal,
      onRetry: (err, attempt, delayMs) => ctx.logger.warn({ code: err.code, attempt, delayMs }, `http: ${err.message}; retrying`),
    };
  }

  get address(): string {
    const a = this.conn.address;
    const address = Array.isArray(a) ? a[0] : a;
    if (!address) throw new ConveyorError("definition_invalid", "connection.address is required for http connections", { hint: "the URL to call, e.g. https://supplier.example/feed" });
    return address;
  }

  /** The download request: payload in the query for GET, as a JSON body otherwise. */
  importRequest(url = this.address): HttpRequest {
    if (this.method === "GET" || this.method === "HEAD") {
      const params = payloadQuery(this.conn.payload);
      const target = new URL(url);
      for (const [k, v] of params) if (!target.searchParams.has(k)) target.searchParams.append(k, v);
      return { method: this.method, url: target.toString(), headers: { accept: "application/json, */*" } };
    }
    return {
      method: this.method,
      url,
      headers: { accept: "application/json, */*", "content-type": "application/json" },
      body: JSON.stringify(this.conn.payload ?? {}),
    };
  }

  /**
   * Sends with authorization; on a 401 the token is refreshed once and the
   * request sent again. A status of 300 and up is thrown as a coded error.
   * `makeRequest` is called per attempt so a streamed body can be reopened.
   */
  async send(makeRequest: () => HttpRequest): Promise<HttpResponse> {
    let refreshed = false;
    for (;;) {
      const req = makeRequest();
      const authorization = await this.auth.header();
      const headers: Record<string, string> = { "user-agent": "conveyor", ...req.headers, ...(this.conn.headers ?? {}) };
      if (authorization && !Object.keys(headers).some((k) => k.toLowerCase() === "authorization")) headers.authorization = authorization;
      const res = await this.client.send({ ...req, headers });
      if (res.status === 401 && !refreshed && (await this.auth.refresh())) {
        refreshed = true;
        await readSnippet(res.body);
        continue;
      }
      if (res.status >= 300) throw statusError(res.status, req.method, req.url, await readSnippet(res.body));
      return res;
    }
  }

  /** Runs `fn` under the connect retry: network faults, timeouts and 5xx are tried again, auth never. */
  withRetry<T>(fn: () => Promise<T>, policy: Partial<RetryPolicy> = {}): Promise<T> {
    return withRetry(() => fn(), { ...this.retry, ...policy });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
