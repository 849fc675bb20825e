import { ConveyorError } from "../src/errors.js";
import { isSecretHeader, isSecretParam, registerSecret, registerUrlSecrets } from "../src/secrets.js";
import { CONNECT_RETRY, withRetry, type RetryPolicy } from "../src/retry.js";
import type { ConnectorContext } from "./types.js";
import type { HttpConnection } from "./http-connection.js";

export type { HttpConnection } from "./http-connection.js";
import { HttpClient, readSnippet, statusError, type HttpRequest, type HttpResponse } from "./http-client.js";
import { HttpAuth } from "./http-auth.js";
import { addressFromValue, RequestValues, runtimeRefs } from "./http-refs.js";

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

function usesTriggerValue(text: string): boolean {
  return runtimeRefs(text).some((r) => r.kind === "trigger");
}

function originOf(address: string | undefined): string | undefined {
  if (!address || addressFromValue(address)) return undefined;
  try {
    return new URL(address).origin;
  } catch {
    return undefined;
  }
}

/**
 * One http connection's way of talking to its server: the address, the
 * configured headers, the authorization, a single refresh after a 401, the
 * run-time placeholders (trigger values, pointers) and the connect retry.
 * The connector's import and export sides and its triggers share it.
 */
export class HttpExchange {
  readonly client: HttpClient;
  readonly auth: HttpAuth;
  readonly method: string;
  readonly values: RequestValues;
  private readonly retry: RetryPolicy;
  /** Set when an address comes from an answer: credentials then go only to the origins the definition names. */
  private readonly trusted: Set<string> | undefined;

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
    this.values = new RequestValues(conn, ctx.metadata);
    // Read as written: a missing address is reported when it is used, not here.
    const addresses = [[conn.address ?? []].flat()[0], ...(conn.triggers ?? []).map((t) => t.address)].filter((a): a is string => typeof a === "string");
    if (addresses.some(addressFromValue)) {
      const named = [...addresses, conn.oauth?.address, conn.login_address].map(originOf).filter((o): o is string => o !== undefined);
      this.trusted = new Set(named);
    }
    this.retry = {
      ...CONNECT_RETRY,
      ...options.retry,
      signal: ctx.signal,
      onRetry: (err, attempt, delayMs) => ctx.logger.warn({ code: err.code, attempt, delayMs }, `http: ${err.message}; retrying`),
    };
  }

  /** The address as written: run-time placeholders still in it. */
  get rawAddress(): string {
    const a = this.conn.address;
    const address = Array.isArray(a) ? a[0] : a;
    if (!address) throw new ConveyorError("definition_invalid", "connection.address is required for http connections", { hint: "the URL to call, e.g. https://supplier.example/feed" });
    return address;
  }

  /** The address to call: trigger values and pointers filled in. */
  get address(): string {
    return this.values.fillAddress(this.rawAddress);
  }

  /** The download request: payload in the query for GET, as a JSON body otherwise. */
  importRequest(url = this.address): HttpRequest {
    const payload = this.values.fillDeep(this.conn.payload ?? {}) as Record<string, unknown>;
    if (this.method === "GET" || this.method === "HEAD") {
      const params = payloadQuery(payload);
      const target = new URL(url);
      for (const [k, v] of params) if (!target.searchParams.has(k)) target.searchParams.append(k, v);
      return { method: this.method, url: target.toString(), headers: { accept: "application/json, */*" } };
    }
    return {
      method: this.method,
      url,
      headers: { accept: "application/json, */*", "content-type": "application/json" },
      body: JSON.stringify(payload),
    };
  }

  /**
   * Sends with authorization; on a 401 the token is refreshed once and the
   * request sent again. A status of 300 and up is thrown as a coded error.
   * `makeRequest` is called per attempt so a streamed body can be reopened.
   * Headers: the request's defaults, then the connection's, then `own` (a
   * trigger's: `own` set marks a trigger, which does not get the connection
   * headers that use trigger values, the final request's own). An address a
   * trigger's answer chose on another origin gets no credentials: the answer
   * must not be able to send them anywhere.
   */
  async send(makeRequest: () => HttpRequest, own?: Record<string, string>): Promise<HttpResponse> {
    let refreshed = false;
    for (;;) {
      const req = makeRequest();
      const trusted = this.trusts(req.url);
      const connHeaders = Object.entries(this.conn.headers ?? {}).filter(([k, v]) => (trusted || !isSecretHeader(k)) && !(own && usesTriggerValue(v)));
      const headers: Record<string, string> = { "user-agent": "conveyor", ...req.headers, ...Object.fromEntries(connHeaders.map(([k, v]) => [k, this.values.fill(v)])), ...(own ?? {}) };
      const authorization = trusted ? await this.auth.header() : undefined;
      if (authorization && !Object.keys(headers).some((k) => k.toLowerCase() === "authorization")) headers.authorization = authorization;
      const res = await this.client.send({ ...req, headers });
      if (res.status === 401 && trusted && !refreshed && (await this.auth.refresh())) {
        refreshed = true;
        await readSnippet(res.body);
        continue;
      }
      if (res.status >= 300) throw statusError(res.status, req.method, req.url, await readSnippet(res.body));
      return res;
    }
  }

  private trusts(url: string): boolean {
    if (!this.trusted) return true;
    try {
      return this.trusted.has(new URL(url).origin);
    } catch {
      return false;
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
