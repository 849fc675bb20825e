import { ConveyorError } from "../errors.js";
import type { RateLimitHeaders } from "./limiter.js";

export type Headers = Record<string, string | string[] | undefined>;

/** What a caller needs to say which request failed: never headers, never the body sent. */
export interface RequestLabel {
  method: string;
  path: string;
}

export function header(headers: Headers, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

export function rateHeaders(headers: Headers): RateLimitHeaders | undefined {
  const limit = Number(header(headers, "x-rate-limit-limit"));
  const remaining = Number(header(headers, "x-rate-limit-remaining"));
  const reset = Number(header(headers, "x-rate-limit-reset"));
  if (![limit, remaining, reset].every(Number.isFinite)) return undefined;
  if (header(headers, "x-rate-limit-remaining") === undefined) return undefined;
  return { limit, remaining, reset };
}

/** The Unix second after which a 429 may be retried: the reset header, else Retry-After, else a short pause. */
export function retryAt(headers: Headers, nowMs = Date.now()): number {
  const reset = Number(header(headers, "x-rate-limit-reset"));
  if (Number.isFinite(reset) && reset > 0) return reset;
  const after = header(headers, "retry-after");
  if (after !== undefined) {
    const seconds = Number(after);
    if (Number.isFinite(seconds)) return nowMs / 1000 + seconds;
    const date = Date.parse(after);
    if (Number.isFinite(date)) return date / 1000;
  }
  return nowMs / 1000 + 5;
}

export function parseBody(text: string): unknown {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The human message of any of the service's error envelopes (v1 failure, v3 simple result, v3 validation). */
export function serviceMessage(body: unknown): string {
  if (typeof body === "string") return body.trim().slice(0, 300) || "(empty body)";
  if (!isRecord(body)) return "(no message)";
  if (typeof body.message === "string" && body.message) return body.message;
  if (typeof body.error === "string" && body.error) return body.error;
  const failed = isRecord(body.results) ? body.results.failed : undefined;
  if (isRecord(failed)) {
    const parts = Object.values(failed)
      .map((entry) => (isRecord(entry) && typeof entry.message === "string" ? entry.message : undefined))
      .filter((m): m is string => m !== undefined);
    if (parts.length) return parts.join("; ");
  }
  return JSON.stringify(body).slice(0, 300);
}

/** An HTTP error status as a ConveyorError naming the request and carrying the service's message. */
export function statusError(label: RequestLabel, status: number, body: unknown): ConveyorError {
  const text = `${label.method} ${label.path} failed with HTTP ${status}: ${serviceMessage(body)}`;
  const details = { method: label.method, path: label.path, status };
  if (status >= 500) {
    return new ConveyorError("service_unavailable", text, {
      retryable: true,
      details,
      hint: "The service had a problem; the request is retried when that is safe. If it persists, check the service's status.",
    });
  }
  if (status === 401 || status === 403) {
    return new ConveyorError("service_http", text, {
      details,
      hint: "Check the API user and token (settings api_user / api_token, env CONVEYOR_API_USER / CONVEYOR_API_TOKEN).",
    });
  }
  return new ConveyorError("service_http", text, { details });
}

/** v1 answers HTTP 200 with `{result:'failure', message}`: the body, not the status, says it failed. */
export function v1Failure(label: RequestLabel, body: unknown): ConveyorError | undefined {
  if (!isRecord(body) || body.result !== "failure") return undefined;
  return new ConveyorError("service_rejected", `${label.method} ${label.path} was refused by the service: ${serviceMessage(body)}`, {
    details: { method: label.method, path: label.path },
  });
}

/** v1's missing-record envelope `{time, type:'items'}` (HTTP 200). */
export function isMissingRecord(body: unknown): boolean {
  if (!isRecord(body) || body.type !== "items") return false;
  return Object.keys(body).every((key) => key === "time" || key === "type");
}

export function asRecord(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

export { isRecord };
