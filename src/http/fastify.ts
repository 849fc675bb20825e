/**
 * A Fastify instance whose routes validate with zod, as every other edge of
 * Conveyor does, and never with JSON schemas. Fastify loads Ajv and
 * fast-json-stringify when an instance is created unless it is handed
 * compilers of its own, and compiling their code slows every start of the
 * embedded service, which a `conveyor run` pays in full. The
 * compilers given here refuse a route schema, so one added by mistake fails
 * at start-up instead of going unvalidated.
 *
 * @module
 */

import Fastify, { type FastifyHttpOptions, type FastifyInstance } from "fastify";
import type { Server } from "node:http";

/** The compiler handed to Fastify: a route schema is a mistake here. */
function refuseSchema(): never {
  throw new Error("route schemas are not used here: validate the request with its zod schema in the handler");
}

export function newFastify(options: FastifyHttpOptions<Server>): FastifyInstance {
  return Fastify({
    ...options,
    schemaController: { compilersFactory: { buildValidator: () => refuseSchema, buildSerializer: () => refuseSchema } },
  });
}
