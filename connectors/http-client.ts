import type { Readable } from "node:stream";
import { Agent, buildConnector, request, type Dispatcher } from "undici";
import { ConveyorError } from "../src/errors.js";
import { isSecretHeader, isSecretParam, maskSecrets } from "../src/secrets.js";
import type { Logger } from "../src/log.js";
import { checkedHost } from "./net-guard.js";

export interface HttpClientOptions {
  allowPrivateHosts: boolean;
  /** `validate: false` turns certificate checks off. */
  validate: boolean;
  /** Longest wait for response headers, and between two body chunks. */
  timeoutMs: number;
  logger: Logger;
  verbose: boolean;
  signal?: AbortSignal | undefined;
}

export interface HttpRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer | Readable;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData["body"];
}

/** A URL fit for messages and traces: no credentials, secret-looking query values masked. */
export function safeUrl(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = "";
    url.password = "";
    for (const key of [...url.searchParams.keys()]) if (isSecretParam(key)) url.searchParams.set(key, "********");
    return maskSecrets(url.toString());
  } catch {
    return maskSecrets(raw);
  }
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_OSSL)/;

/** Maps what undici and the socket throw to the connector error codes. */
export function classifyNetworkError(err: unknown, url: string): ConveyorError {
  if (err instanceof ConveyorError) return err;
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? "";
  const message = e.cause?.message ?? e.message ?? String(err);
  const where = safeUrl(url);
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT" || code === "UND_ERR_CONNECT_TIMEOUT" || code === "ETIMEDOUT")
    return new ConveyorError("timeout", `${where} did not answer in time (${code})`, { cause: err, retryable: true, hint: "the server is slow or unreachable; the run retries later" });
  if (TLS_CODES.test(code) || /certificate|SSL routines|TLS/i.test(message))
    return new ConveyorError("tls", `TLS with ${where} failed: ${message}`, { cause: err, hint: "fix the server certificate, or set validate: false on the connection for a server you trust" });
  if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EHOSTUNREACH" || code === "ENETUNREACH")
    return new ConveyorError("connect", `cannot connect to ${where}: ${message}`, { cause: err, retryable: true, hint: "check the address and that the server is up" });
  if (code === "UND_ERR_ABORTED" || (err as Error).name === "AbortError")
    return new ConveyorError("canceled", `request to ${where} was canceled`, { cause: err });
  return new ConveyorError("transfer", `connection to ${where} broke: ${message}`, { cause: err, retryable: true });
}

/** Maps an HTTP status that is not success to a connector error. */
export function statusError(status: number, method: string, url: string, snippet: string): ConveyorError {
  const where = `${method} ${safeUrl(url)}`;
  const said = snippet ? `: ${maskSecrets(snippet.slice(0, 300))}` : "";
  const details = { status };
  if (status === 401 || status === 403)
    return new ConveyorError("auth", `${where} refused the credentials (HTTP ${status})${said}`, { details, hint: "check username/password, the token, or the oauth client id and secret" });
  if (status === 404 || status === 410) return new ConveyorError("not_found", `${where} answered HTTP ${status}${said}`, { details, hint: "check the address" });
  if (status === 408 || status === 429 || status >= 500)
    return new ConveyorError("transfer", `${where} answered HTTP ${status}${said}`, { details, retryable: true });
  return new ConveyorError("protocol", `${where} answered HTTP ${status}${said}`, { details });
}

/** Reads at most a little of an error body, for the message. */
export async function readSnippet(body: HttpResponse["body"]): Promise<string> {
  let text = "";
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (text.length < 1000) text += chunk.toString("utf8");
    }
  } catch {
    // A body that breaks while we only wanted it for a message is not worth its own error.
  }
  return text.replace(/\s+/g, " ").trim();
}

/**
 * undici's socket maker behind the network guard: every new socket, for the
 * first request, the oauth token or a next page, dials the address the guard
 * resolved and checked, while TLS still names and verifies the host.
 */
export function guardedConnector(allowPrivateHosts: boolean, options: buildConnector.BuildOptions): buildConnector.connector {
  const connect = buildConnector(options);
  return (opts, callback) => {
    checkedHost(opts.hostname, allowPrivateHosts).then(
      (target) => {
        try {
          connect({ ...opts, hostname: target.address, ...(target.servername ? { servername: target.servername } : {}) }, callback);
        } catch (err) {
          callback(err instanceof Error ? err : new Error(String(err)), null);
        }
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null),
    );
  };
}

/** undici with the network guard, the TLS switch, timeouts, traces and error codes. */
export class HttpClient {
  private readonly agent: Agent;

  constructor(private readonly options: HttpClientOptions) {
    this.agent = new Agent({
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: guardedConnector(options.allowPrivateHosts, { timeout: options.timeoutMs, rejectUnauthorized: options.validate }),
    });
  }

  async send(req: HttpRequest): Promise<HttpResponse> {
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      throw new ConveyorError("definition_invalid", `connection.address ${safeUrl(req.url)} is not a valid URL`, { hint: "write it as https://host/path" });
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new ConveyorError("definition_invalid", `connection.address must be an http or https URL, got ${url.protocol}`);
    const started = Date.now();
    try {
      const res = await request(url, {
        dispatcher: this.agent,
        method: req.method.toUpperCase() as Dispatcher.HttpMethod,
        headers: req.headers ?? {},
        body: req.body ?? null,
        signal: this.options.signal,
      });
      if (this.options.verbose)
        this.options.logger.debug({ method: req.method, url: safeUrl(req.url), status: res.statusCode, ms: Date.now() - started, headers: redactHeaders(req.headers ?? {}) }, "http");
      return { status: res.statusCode, headers: res.headers, body: res.body };
    } catch (err) {
      throw classifyNetworkError(err, req.url);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** Header values in traces: credentials never, whatever the header is called. */
export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k] = isSecretHeader(k) ? "********" : maskSecrets(v);
  return out;
}
