/**
 * The response envelopes of the seeds, in one place so every route answers in
 * the same shapes. v1 and v3 differ: v1 failures are `{result:'failure',
 * message, time}`, v3 simple errors `{result:'error', message}` and v3
 * validation failures `{results:{failed:{"0":{message, code}}}}`.
 *
 * @module
 */

import type { FastifyReply, FastifyRequest } from "fastify";

/** Unix seconds: the `time` of v1 envelopes (the seed does not show its format). */
export function unixTime(now: number = Date.now()): number {
  return Math.floor(now / 1000);
}

export function isV1(request: FastifyRequest): boolean {
  return request.url.startsWith("/v1/") || request.url === "/v1";
}

export function v1Failure(message: string, now?: number): { result: "failure"; message: string; time: number } {
  return { result: "failure", message, time: unixTime(now) };
}

export function v3Error(message: string): { result: "error"; message: string } {
  return { result: "error", message };
}

export interface FailedEntry {
  message: string;
  code: number;
}

export function validationFailure(messages: readonly (string | FailedEntry)[]): { results: { failed: Record<string, FailedEntry> } } {
  const failed: Record<string, FailedEntry> = {};
  messages.forEach((m, i) => {
    failed[String(i)] = typeof m === "string" ? { message: m, code: 1 } : m;
  });
  return { results: { failed } };
}

export function missingRecord(now?: number): { time: number; type: "items" } {
  return { time: unixTime(now), type: "items" };
}

/** A failure in the envelope of the API version the request used. */
export function sendError(request: FastifyRequest, reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).send(isV1(request) ? v1Failure(message) : v3Error(message));
}

/** A request error the route handlers throw; the error handler turns it into the right envelope. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** v3 validation entries; when set the body is the validation envelope. */
    readonly failed?: readonly (string | FailedEntry)[],
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/** A 400 in the v3 validation envelope, one entry per problem. */
export function badRequest(...messages: string[]): HttpError {
  return new HttpError(400, messages.join("; "), messages);
}

/** A whole number parameter within bounds; absent or empty gives `fallback`. */
export function wholeNumber(value: string | undefined, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw badRequest(`${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** One string from a query or body value (repeated query keys give arrays). */
export function text(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return text(value[0]);
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/** Body or query as a plain object of values. */
export function fields(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function truthy(value: unknown): boolean {
  const t = text(value)?.trim().toLowerCase();
  return t === "1" || t === "true" || t === "yes" || t === "on";
}
