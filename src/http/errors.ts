/**
 * How both servers turn what a route throws into a response. Domain code
 * throws `ConveyorError`s with stable codes and knows nothing of HTTP; the
 * table here gives the status of each code a route may let through. Route
 * handlers may still throw an `HttpError` for what only HTTP knows (a bad
 * query parameter, a path id that is not a number).
 *
 * @module
 */

import type { FastifyInstance, FastifyRequest } from "fastify";
import { ConveyorError, type ErrorCode } from "../errors.js";
import type { Logger } from "../log.js";
import { edgeRefusal } from "./body.js";
import { HttpError, isV1, sendError, v1Failure, v3Error, validationFailure } from "./envelopes.js";

/**
 * The status of each code the servers answer with; a code not listed is the
 * server's own failure (500), as any other error is, so a connector or
 * pipeline error that reached a route by mistake is never passed off as the
 * client's.
 */
export const STATUS_OF_CODE: Readonly<Partial<Record<ErrorCode, number>>> = {
  definition_invalid: 400,
  definition_not_found: 404,
  not_found: 404,
  conflict: 409,
};

/**
 * The validation entries a domain error carries in `details.problems`, one
 * text per problem, so the response lists each in the v3 validation envelope.
 */
export function problemsOf(error: ConveyorError): string[] | undefined {
  const problems = error.details.problems;
  return Array.isArray(problems) && problems.every((p) => typeof p === "string") ? (problems as string[]) : undefined;
}

/** The request error a thrown value stands for, or undefined when it is the server's own failure. */
export function toHttpError(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error;
  if (!(error instanceof ConveyorError)) return undefined;
  const status = STATUS_OF_CODE[error.code];
  return status === undefined ? undefined : new HttpError(status, error.message, problemsOf(error));
}

export interface ErrorReplies {
  /** Whether `/v1/` paths answer in the v1 envelope (the embedded service serves both versions). */
  v1: boolean;
  /** Applied to every message a client sees: the daemon masks secrets, the embedded service holds none. */
  mask: (text: string) => string;
  /** What a client is told of a failure of the server itself; the details go to the log. */
  internal: string;
  logger: Logger;
  /** The log line of a failure of the server itself. */
  logMessage: string;
  /** The URL the log line names (the daemon leaves out the query). */
  logUrl: (request: FastifyRequest) => string;
}

/** Installs the error handler: refusals at the edge, request errors in their envelope, anything else a 500 that is logged. */
export function registerErrorReplies(app: FastifyInstance, o: ErrorReplies): void {
  app.setErrorHandler((thrown, request, reply) => {
    const error = edgeRefusal(thrown, request) ?? toHttpError(thrown);
    if (error) {
      if (error.failed && !(o.v1 && isV1(request))) {
        return reply.code(error.statusCode).send(validationFailure(error.failed.map((f) => (typeof f === "string" ? o.mask(f) : { ...f, message: o.mask(f.message) }))));
      }
      return sendError(request, reply, error.statusCode, o.mask(error.message));
    }
    const status = typeof (thrown as { statusCode?: unknown }).statusCode === "number" ? (thrown as { statusCode: number }).statusCode : 500;
    if (status >= 500) o.logger.error({ err: thrown, url: o.logUrl(request) }, o.logMessage);
    const message = status >= 500 ? o.internal : o.mask((thrown as Error).message);
    return reply.code(status).send(o.v1 && isV1(request) ? v1Failure(message) : v3Error(message));
  });
}
