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
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** The compiler handed to Fastify: a route schema is a mistake here. */
function refuseSchema(): never {
  throw new Error("route schemas are not used here: validate the request with its zod schema in the handler");
}

export function newFastify(options: FastifyHttpOptions<Server>): FastifyInstance {
  const app = Fastify({
    ...options,
    schemaController: { compilersFactory: { buildValidator: () => refuseSchema, buildSerializer: () => refuseSchema } },
  });
  const endQuiet = trackQuietConnections(app.server);
  app.addHook("preClose", async () => endQuiet());
  return app;
}

/**
 * Node's `server.close()` waits for every connection to end, and counts one
 * that has not sent a request yet as busy (its headers timeout runs from the
 * connect), so a pooled client that connected and then had nothing to send
 * held a daemon's shutdown until the client's own keep-alive timeout. Once
 * close begins, each connection is ended as soon as no request is in
 * progress on it: at once when it has none, else when its last response has
 * been written.
 */
function trackQuietConnections(server: Server): () => void {
  const sockets = new Set<Socket>();
  const requests = new Map<Socket, number>();
  let closing = false;
  const endIfQuiet = (socket: Socket): void => {
    if (!closing || requests.has(socket)) return;
    // end() lets what is left to write go out first; destroy() then drops a client that keeps its half open.
    socket.once("finish", () => socket.destroy());
    socket.end();
  };
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    endIfQuiet(socket);
  });
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    requests.set(socket, (requests.get(socket) ?? 0) + 1);
    res.once("close", () => {
      const left = (requests.get(socket) ?? 1) - 1;
      if (left > 0) requests.set(socket, left);
      else requests.delete(socket);
      endIfQuiet(socket);
    });
  });
  return () => {
    closing = true;
    for (const socket of sockets) endIfQuiet(socket);
  };
}
