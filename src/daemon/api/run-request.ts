import type { FastifyReply, FastifyRequest } from "fastify";
import { HttpError, badRequest } from "../../http/envelopes.js";
import { toConveyorError } from "../../errors.js";
import type { RunRequest } from "../types.js";
import type { EnqueueResult } from "../queue.js";
import type { ApiContext } from "./context.js";
import { checkRunFlags, waitSeconds, type RunFlag } from "./flags.js";
import { rejectUnknown } from "./query.js";
import { awaitRun } from "./run-wait.js";
import { runView } from "./runs.js";

/** The run endpoint's parameters (part 4.2), `force`, which lets a run past its guards, and `wait`. */
export const RUN_PARAMS = ["debug", "diff", "notify", "email", "force", "wait"] as const;

/** An undo's parameters: it restores what a run set, so `diff` means nothing to it; notify as a run. */
export const UNDO_PARAMS = ["debug", "force", "wait", "notify", "email", "identifier", "field"] as const;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The run requests held by `?wait=`, so closing the API answers them instead of waiting out their time. */
export type RunHolds = Set<AbortController>;

export interface RunAsk {
  key: string;
  account: string;
  flags: Record<RunFlag, boolean>;
  email: string | null;
  trigger: RunRequest["trigger"];
  undo?: RunRequest["undo"];
}

/**
 * Queues one run, in the cluster's queue when there is one, and says what
 * happened in words. The API's run route and the console's run buttons both
 * come through here, so a run asked for in a browser is the same run.
 */
export async function requestRun(ctx: ApiContext, ask: RunAsk): Promise<{ result: EnqueueResult; message: string; what: string }> {
  const { key, account, flags, undo } = ask;
  const run: RunRequest = {
    automation: key,
    account,
    mode: flags.debug ? "debug" : "prod",
    trigger: ask.trigger,
    diff: flags.diff,
    force: flags.force,
    notify: flags.notify,
    email: ask.email,
    ...(undo ? { undo } : {}),
  };
  let result: EnqueueResult;
  try {
    result = ctx.intake ? await ctx.intake.enqueue(run) : ctx.queue.enqueue(run);
  } catch (err) {
    throw new HttpError(503, toConveyorError(err).message);
  }
  const what = `${run.mode === "debug" ? "debug" : "live"} ${undo ? `undo of run ${undo.of}` : "run"} of automation ${key}`;
  const message = result.existing
    ? `a ${what} is already waiting; this request joined it`
    : result.queued
      ? `${what} queued; it starts when the automation's current run ends or a slot is free`
      : `${what} started`;
  ctx.logger.info({ event: "run_requested", run_id: result.id, automation: key, account, mode: run.mode, existing: Boolean(result.existing), trigger: ask.trigger }, "run requested");
  return { result, message, what };
}

/**
 * `GET …/{id}/run`: queue a run and answer `{id, message, result}` at once
 * (the seed: "A run is queued; the 200 response confirms queueing"). `id` is
 * the run's id: its record, status and debug files are found by it. With
 * `wait` the answer comes when the run ends or the time is up, and adds the
 * run's `state` and its record. Every parameter is checked before the run is
 * queued: a refused request leaves nothing behind.
 */
export async function queueRun(
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  holds: RunHolds,
  key: string,
  account: string,
  undo?: RunRequest["undo"],
): Promise<Record<string, unknown>> {
  const q = rejectUnknown(request, undo ? UNDO_PARAMS : RUN_PARAMS);
  const flags = checkRunFlags(request);
  const wait = waitSeconds(request);
  const email = q.email?.trim() || null;
  if (email !== null && !EMAIL.test(email)) throw badRequest(`email must be an e-mail address, not ${JSON.stringify(q.email)}`);
  const { result, message, what } = await requestRun(ctx, { key, account, flags, email, trigger: "api", ...(undo ? { undo } : {}) });
  if (wait === null) return { id: result.id, message, result: "success" };

  const hold = new AbortController();
  holds.add(hold);
  // A response's `close` before it was written means the client hung up: stop reading the store for it.
  const hungUp = (): void => {
    if (!reply.raw.writableEnded) hold.abort("client_gone");
  };
  reply.raw.on("close", hungUp);
  try {
    const waited = await awaitRun(ctx, result.id, wait, hold.signal);
    ctx.logger.debug({ event: "run_wait_ended", run_id: result.id, state: waited.state, ended: waited.ended }, "a run request's wait ended");
    const record = waited.record;
    // The server is closing and waits for open connections: this one must not linger on keep-alive after the answer.
    if (waited.ended === "shutdown") void reply.header("Connection", "close");
    const still = waited.ended === "shutdown" ? `was still ${waited.state} when this daemon began to shut down` : `is still ${waited.state} after ${wait} s`;
    const said = waited.state === "finished" ? `${what} finished: ${record?.outcome ?? "unknown"}` : `${what} ${still}; GET /v3/automations/runs/${result.id} reads its record`;
    return { id: result.id, message: said, result: "success", state: waited.state, run: record ? runView(record) : null };
  } finally {
    reply.raw.off("close", hungUp);
    holds.delete(hold);
  }
}
