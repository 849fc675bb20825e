import type { FastifyInstance } from "fastify";
import type { ApiContext } from "./context.js";

/**
 * Probes: `/healthz` answers while the process serves requests; `/readyz`
 * once recovery is done and the scheduler runs, and no longer while the
 * daemon drains for shutdown. `/metrics` is the Prometheus scrape.
 */
export function registerHealth(app: FastifyInstance, ctx: ApiContext): void {
  app.get("/healthz", async () => ({ result: "success", message: "alive" }));

  app.get("/readyz", async (_request, reply) => {
    if (ctx.ready() && !ctx.queue.isDraining) return { result: "success", message: "ready" };
    return reply.code(503).send({ result: "error", message: ctx.queue.isDraining ? "shutting down" : "starting" });
  });

  app.get("/metrics", async (_request, reply) => reply.header("Content-Type", "text/plain; version=0.0.4; charset=utf-8").send(await ctx.metrics.render()));
}
