/**
 * The body and query limits both servers (the daemon API and the embedded
 * service) hold every request to, in one place: a JSON body is measured
 * before it is parsed, its keys and the query's keys are checked before a
 * handler sees them, and every route has a size limit of its own.
 *
 * @module
 */

import type { FastifyInstance, FastifyRequest } from "fastify";
import { depthMessage, findPrototypeKey, jsonDepth, MAX_JSON_DEPTH, PROTOTYPE_KEYS, PROTOTYPE_KEYS_RULE, prototypeKeyMessage } from "../json-limits.js";
import { HttpError } from "./envelopes.js";

/** A route prefix and the largest body it takes, in bytes; the first prefix that matches wins. */
export type BodyLimits = ReadonlyArray<readonly [prefix: string, bytes: number]>;

const KIB = 1024;
const MIB = 1024 * KIB;

function showBytes(bytes: number): string {
  if (bytes >= MIB && bytes % MIB === 0) return `${bytes / MIB} MB`;
  if (bytes >= KIB && bytes % KIB === 0) return `${bytes / KIB} KB`;
  return `${bytes} bytes`;
}

function refusal(message: string): HttpError {
  return new HttpError(400, message, [{ message, code: 1 }]);
}

/** Parses a JSON body after checking its depth; an empty body is an empty object (DELETE and PATCH bodies are optional). */
export function parseJsonBody(raw: string): unknown {
  if (raw.trim() === "") return {};
  const depth = jsonDepth(raw);
  if (depth > MAX_JSON_DEPTH) throw refusal(depthMessage("the body", depth));
  try {
    return JSON.parse(raw) as unknown;
  } catch (err) {
    throw refusal(`the body is not valid JSON: ${(err as Error).message}`);
  }
}

/** 400 naming the first prototype key of the query or the body (form bodies included), before any handler runs. */
function checkKeys(request: FastifyRequest): void {
  // A raw body (the webhook intake's) has bytes, not keys; walking a Buffer would visit every byte.
  if (Buffer.isBuffer(request.body)) return;
  const inQuery = findPrototypeKey(request.query);
  if (inQuery) throw refusal(prototypeKeyMessage("the query", inQuery));
  const inBody = findPrototypeKey(request.body);
  if (inBody) throw refusal(prototypeKeyMessage("the body", inBody));
}

/**
 * Installs the JSON parser, the key check and the per-route size limits.
 * Call it before any route is added: the limits are set as routes register.
 */
export function registerBodyLimits(app: FastifyInstance, limits: BodyLimits): void {
  app.addHook("onRoute", (route) => {
    if (route.bodyLimit !== undefined) return;
    const match = limits.find(([prefix]) => route.url.startsWith(prefix));
    if (match) route.bodyLimit = match[1];
  });
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(typeof body === "string" ? body : body.toString("utf8")));
    } catch (err) {
      done(err as HttpError, undefined);
    }
  });
  app.addHook("preValidation", async (request) => checkKeys(request));
}

/**
 * Fastify's own answers to a body refused at the edge say only "Request body
 * is too large" or "prototype property is not allowed as field name" (a
 * multipart field); these name the route's limit and the rule. Undefined for
 * any other error.
 */
export function edgeRefusal(error: unknown, request: FastifyRequest): HttpError | undefined {
  const code = (error as { code?: unknown }).code;
  if (code === "FST_PROTO_VIOLATION") return refusal(`a form field of the body is named one of ${PROTOTYPE_KEYS.join(", ")}; ${PROTOTYPE_KEYS_RULE}`);
  if (code !== "FST_ERR_CTP_BODY_TOO_LARGE") return undefined;
  const limit = request.routeOptions.bodyLimit;
  const message = `the body is larger than the ${showBytes(limit)} ${request.method} ${request.routeOptions.url ?? request.url.split("?")[0]} accepts; send less at a time`;
  return new HttpError(413, message, [{ message, code: 1 }]);
}
