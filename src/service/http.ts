import type { Dispatcher, FormData } from "undici";
import { Agent, request } from "./undici-lean.js";
import type { Readable } from "node:stream";
import { ConveyorError } from "../errors.js";
import { silentLogger, type Logger } from "../log.js";
import { withRetry, type RetryPolicy } from "../retry.js";
import { registerSecret } from "../secrets.js";
import type { RateClass, RateLimiter } from "./limiter.js";
import { parseBody, rateHeaders, retryAt, statusError, type Headers, type RequestLabel } from "./response.js";

export type HttpMethod = "GET" | "POST" | "PATCH" | "PUT" | "DELETE" | "OPTIONS";

/** Requests one run made, by class; the run record reports them. Options requests count as reads. */
export interface RequestCounter {
  read: number;
  write: number;
}

export function newCounter(): RequestCounter {
  return { read: 0, write: 0 };
}

export function rateClass(method: HttpMethod): RateClass {
  if (method === "OPTIONS") return "options";
  return method === "GET" ? "read" : "write";
}

export type QueryValue = string | number | boolean | undefined;

export interface ServiceRequest {
  method: HttpMethod;
  /** From the service root, e.g. `/v1/editor/items`; or an absolute URL of the same service. */
  path: string;
  query?: Record<string, QueryValue>;
  form?: Record<string, string | number | undefined>;
  json?: unknown;
  /** Built once per attempt: a multipart body cannot be sent twice. */
  multipart?: () => FormData;
  /** A write that may be repeated without effect (same PATCH body, archive). Reads always are. */
  idempotent?: boolean;
  /** Override the number of attempts for this request (1 = no retry). */
  attempts?: number;
  signal?: AbortSignal;
}

export interface ServiceResponse {
  status: number;
  body: unknown;
  headers: Headers;
}

/** What the typed calls need: a transport bound to one run's counter. */
export interface ServiceCaller {
  send(req: ServiceRequest): Promise<ServiceResponse>;
  open(url: string, signal?: AbortSignal): Promise<Readable>;
}

export interface TransportOptions {
  baseUrl: string;
  apiUser: string;
  apiToken: string;
  integration?: string;
  limiter: RateLimiter;
  logger?: Logger;
  retry?: Partial<Pick<RetryPolicy, "attempts" | "baseDelayMs" | "maxDelayMs">>;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** 429s in a row before giving up on one request. */
  max429?: number;
}

// Connection errors raised before the request left this machine: repeating them repeats nothing.
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

let sharedAgent: Agent | undefined;

/** One keep-alive pool for the process. */
export function serviceAgent(): Agent {
  sharedAgent ??= new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: 32 });
  return sharedAgent;
}

function networkError(raw: unknown, label: RequestLabel): ConveyorError {
  if (raw instanceof ConveyorError) return raw;
  const code = typeof raw === "object" && raw !== null && "code" in raw ? String((raw as { code: unknown }).code) : "";
  const name = raw instanceof Error ? raw.name : "";
  if (name === "AbortError" || code === "UND_ERR_ABORTED" || code === "ABORT_ERR") {
    return new ConveyorError("canceled", `${label.method} ${label.path} was canceled`, { cause: raw });
  }
  const sent = !NOT_SENT.has(code);
  const reason = raw instanceof Error ? raw.message : String(raw);
  return new ConveyorError("service_unavailable", `${label.method} ${label.path} failed: ${reason}${code ? ` (${code})` : ""}`, {
    retryable: true,
    cause: raw,
    details: { method: label.method, path: label.path, network: code || name || "error", sent },
    hint: "The service could not be reached or dropped the connection; check service_url and the network.",
  });
}

/**
 * The one way requests reach the service: auth headers, the rate limiter,
 * the per-run counter, 429 waits, retries and error envelopes.
 */
export class HttpTransport {
  readonly baseUrl: string;
  readonly account: string;
  readonly limiter: RateLimiter;
  readonly logger: Logger;
  private readonly authHeaders: Record<string, string>;
  private readonly policy: Pick<RetryPolicy, "attempts" | "baseDelayMs" | "maxDelayMs">;
  private readonly options: TransportOptions;

  constructor(options: TransportOptions) {
    registerSecret(options.apiToken);
    this.options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.account = `${new URL(this.baseUrl).origin}#${options.apiUser}`;
    this.limiter = options.limiter;
    this.logger = options.logger ?? silentLogger;
    this.authHeaders = { "x-auth-user": options.apiUser, "x-auth-token": options.apiToken };
    if (options.integration) this.authHeaders["x-auth-integration"] = options.integration;
    this.policy = { attempts: 5, baseDelayMs: 500, maxDelayMs: 15_000, ...options.retry };
  }

  /** Sends a request and returns its parsed body; errors are ConveyorErrors that never carry the token. */
  async send(req: ServiceRequest, counter: RequestCounter): Promise<ServiceResponse> {
    const label = this.label(req);
    const cls = rateClass(req.method);
    const safe = cls !== "write" || req.idempotent === true;
    return withRetry(
      async () => {
        const res = await this.dispatch(req, label, counter);
        let text: string;
        try {
          text = await res.body.text();
        } catch (raw) {
          throw networkError(raw, label);
        }
        const body = parseBody(text);
        if (res.statusCode >= 400) throw statusError(label, res.statusCode, body);
        return { status: res.statusCode, body, headers: res.headers };
      },
      {
        ...this.policy,
        attempts: req.attempts ?? this.policy.attempts,
        signal: req.signal,
        shouldRetry: (err) => err.retryable && (safe || err.details.sent === false),
        onRetry: (err, attempt, delayMs) =>
          this.logger.warn({ method: label.method, path: label.path, attempt, delayMs, code: err.code }, `retrying: ${err.message}`),
      },
    );
  }

  /** Opens a body as a stream (result and export CSVs); the caller must consume or destroy it. */
  async open(url: string, counter: RequestCounter, signal?: AbortSignal): Promise<Readable> {
    const req: ServiceRequest = { method: "GET", path: url, signal };
    const label = this.label(req);
    return withRetry(
      async () => {
        const res = await this.dispatch(req, label, counter);
        if (res.statusCode >= 400) throw statusError(label, res.statusCode, parseBody(await res.body.text()));
        return res.body;
      },
      { ...this.policy, signal },
    );
  }

  /** One attempt, including the waits on 429: a throttled request was not processed, so even a write is repeated. */
  private async dispatch(req: ServiceRequest, label: RequestLabel, counter: RequestCounter): Promise<Dispatcher.ResponseData> {
    const cls = rateClass(req.method);
    const { url, sameService } = this.url(req);
    const max429 = this.options.max429 ?? 20;
    for (let throttled = 0; ; ) {
      if (sameService) await this.limiter.acquire(this.account, cls, req.signal);
      counter[cls === "write" ? "write" : "read"] += 1;
      const started = Date.now();
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, {
          method: req.method,
          // Presigned links go to storage that needs no credentials: never hand it the token.
          headers: { ...(sameService ? this.authHeaders : {}), ...this.bodyHeaders(req) },
          body: this.body(req),
          dispatcher: serviceAgent(),
          signal: req.signal,
          headersTimeout: this.options.headersTimeoutMs ?? 120_000,
          bodyTimeout: this.options.bodyTimeoutMs ?? 300_000,
        });
      } catch (raw) {
        if (sameService) this.limiter.release(this.account, cls);
        throw networkError(raw, label);
      }
      this.logger.debug({ method: label.method, path: label.path, status: res.statusCode, ms: Date.now() - started }, "service request");
      if (!sameService) return res;
      if (res.statusCode === 429) {
        await res.body.dump().catch(() => undefined);
        this.limiter.blockUntil(this.account, cls, retryAt(res.headers));
        throttled += 1;
        this.logger.warn({ method: label.method, path: label.path, throttled }, "rate limited by the service; waiting for its reset");
        if (throttled >= max429) {
          throw new ConveyorError("rate_limited", `${label.method} ${label.path} was rate limited ${throttled} times in a row`, {
            retryable: true,
            details: { method: label.method, path: label.path, status: 429 },
            hint: "Another client is using this account's budget; lower read_limit / write_limit or run fewer automations at once.",
          });
        }
        continue;
      }
      const rate = rateHeaders(res.headers);
      if (rate) this.limiter.observe(this.account, cls, rate);
      else this.limiter.release(this.account, cls);
      return res;
    }
  }

  private label(req: ServiceRequest): RequestLabel {
    if (/^https?:/i.test(req.path)) {
      const parsed = new URL(req.path);
      // A presigned query string is a credential of its own.
      return { method: req.method, path: parsed.pathname };
    }
    const query = this.query(req);
    return { method: req.method, path: query ? `${req.path}?${query}` : req.path };
  }

  private query(req: ServiceRequest): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(req.query ?? {})) if (value !== undefined) params.append(key, String(value));
    return params.toString();
  }

  private url(req: ServiceRequest): { url: string; sameService: boolean } {
    if (/^https?:/i.test(req.path)) {
      const target = new URL(req.path);
      return { url: target.toString(), sameService: target.origin === new URL(this.baseUrl).origin };
    }
    const query = this.query(req);
    return { url: `${this.baseUrl}${req.path}${query ? `?${query}` : ""}`, sameService: true };
  }

  private bodyHeaders(req: ServiceRequest): Record<string, string> {
    if (req.form) return { "content-type": "application/x-www-form-urlencoded" };
    if (req.json !== undefined) return { "content-type": "application/json" };
    return {};
  }

  private body(req: ServiceRequest): string | FormData | undefined {
    if (req.multipart) return req.multipart();
    if (req.form) {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(req.form)) if (value !== undefined) params.append(key, String(value));
      return params.toString();
    }
    if (req.json !== undefined) return JSON.stringify(req.json);
    return undefined;
  }
}

