import type { FastifyRequest } from "fastify";
import { HttpError } from "../../embedded/envelopes.js";
import { toConveyorError } from "../../errors.js";
import type { RunRequest } from "../types.js";
import type { ApiContext } from "./context.js";
import { checkRunFlags } from "./flags.js";
import { badRequest, rejectUnknown } from "./query.js";

/** The run endpoint's parameters (part 4.2) plus `force`, which lets a run past its guards. */
export const RUN_PARAMS = ["debug", "diff", "notify", "email", "force"] as const;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * `GET …/{id}/run`: queue a run and answer `{id, message, result}` at once
 * (the seed: "A run is queued; the 200 response confirms queueing"). `id` is
 * the run's id: its record, status and debug files are found by it.
 */
export async function queueRun(ctx: ApiContext, request: FastifyRequest, key: string, account: string): Promise<Record<string, unknown>> {
  const q = rejectUnknown(request, RUN_PARAMS);
  const flags = checkRunFlags(request);
  const email = q.email?.trim() || null;
  if (email !== null && !EMAIL.test(email)) throw badRequest(`email must be an e-mail address, not ${JSON.stringify(q.email)}`);
  const run: RunRequest = {
    automation: key,
    account,
    mode: flags.debug ? "debug" : "prod",
    trigger: "api",
    diff: flags.diff,
    force: flags.force,
    notify: flags.notify,
    email,
  };
  let result;
  try {
    result = ctx.intake ? await ctx.intake.enqueue(run) : ctx.queue.enqueue(run);
  } catch (err) {
    throw new HttpError(503, toConveyorError(err).message);
  }
  const what = `${run.mode === "debug" ? "debug" : "live"} run of automation ${key}`;
  const message = result.existing
    ? `a ${what} is already waiting; this request joined it`
    : result.queued
      ? `${what} queued; it starts when the automation's current run ends or a slot is free`
      : `${what} started`;
  ctx.logger.info({ event: "run_requested", run_id: result.id, automation: key, account, mode: run.mode, existing: Boolean(result.existing) }, "run requested over the API");
  return { id: result.id, message, result: "success" };
}
