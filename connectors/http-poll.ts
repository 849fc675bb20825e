import { ConveyorError, isConveyorError } from "../src/errors.js";
import { sleep } from "../src/retry.js";
import { maskSecrets } from "../src/secrets.js";
import type { HttpPoll } from "./http-connection.js";
import type { HttpExchange } from "./http-exchange.js";
import { answerJson, jsonQuery, type TriggerAnswer } from "./http-values.js";

// `poll`: a trigger repeated until a JSONPath condition holds on its answer (a
// report job that is "pending" for a while, then "done"), waiting `interval`
// seconds, growing by `backoff`, and failing at `deadline`, quoting the last
// answer. The run's signal ends the wait at once.

export const POLL_DEFAULTS = { interval: 5, backoff: 1, deadline: 600 } as const;

/** How much of the last answer a deadline error quotes. */
const QUOTE_CHARS = 500;

function same(found: unknown, expected: string | number | boolean): boolean {
  return found !== undefined && found !== null && typeof found !== "object" && String(found as string) === String(expected);
}

/** Masked before it is cut: a cut could leave the start of a secret that no longer matches it. */
function quote(answer: TriggerAnswer): string {
  const flat = maskSecrets(answer.text.replace(/\s+/g, " ").trim());
  return flat.length > QUOTE_CHARS ? `${flat.slice(0, QUOTE_CHARS)}…` : flat;
}

function describeUntil(poll: HttpPoll): string {
  return poll.equals === undefined ? `${poll.until} found nothing` : `${poll.until} was not ${JSON.stringify(poll.equals)}`;
}

/** Whether the condition holds on one answer; throws when the answer says the job failed (`fail_on`). */
function holds(poll: HttpPoll, answer: TriggerAnswer, where: string): boolean {
  const found = jsonQuery(poll.until, answerJson(answer, where), `${where}.poll.until`);
  const first = found[0];
  if (poll.fail_on?.some((v) => same(first, v)))
    throw new ConveyorError("protocol", `${where}.poll: ${poll.until} is ${JSON.stringify(first)}, which ends the polling (fail_on); the answer: ${quote(answer)}`, {
      details: { status: answer.status },
    });
  if (poll.equals !== undefined) return same(first, poll.equals);
  return found.some((v) => v !== undefined && v !== null && v !== false && v !== "");
}

/**
 * Sends the trigger (through `send`, which retries) until its condition holds,
 * and returns that answer with the number of requests it took.
 */
export async function pollTrigger(ex: HttpExchange, poll: HttpPoll, send: () => Promise<TriggerAnswer>, where: string): Promise<{ answer: TriggerAnswer; requests: number }> {
  const deadlineMs = (poll.deadline ?? POLL_DEFAULTS.deadline) * 1000;
  const started = Date.now();
  let wait = (poll.interval ?? POLL_DEFAULTS.interval) * 1000;
  for (let requests = 1; ; requests++) {
    const answer = await send();
    if (holds(poll, answer, where)) return { answer, requests };
    const left = started + deadlineMs - Date.now();
    if (left <= 0)
      throw new ConveyorError("timeout", `${where}.poll: ${describeUntil(poll)} after ${deadlineMs / 1000} s (${requests} request${requests === 1 ? "" : "s"}); the last answer (HTTP ${answer.status}): ${quote(answer)}`, {
        details: { status: answer.status, requests },
        hint: `the server did not finish in time: raise ${where}.poll.deadline, or check ${where}.poll.until and equals against the answer`,
      });
    try {
      await sleep(Math.min(wait, left), ex.ctx.signal);
    } catch (err) {
      if (isConveyorError(err) && err.code === "canceled") throw new ConveyorError("canceled", `canceled while polling ${where}`, { cause: err });
      throw err;
    }
    wait *= poll.backoff ?? POLL_DEFAULTS.backoff;
  }
}
