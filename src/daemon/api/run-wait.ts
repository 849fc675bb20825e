import type { RunRecord, StateStore } from "../../state/index.js";
import type { RunQueue } from "../queue.js";

/** What `?wait=` answers: the run's state when it ended or the time ran out, and its record once it has one. */
export interface WaitOutcome {
  state: "finished" | "running" | "queued";
  record: RunRecord | null;
  /** Why the wait stopped: logged, so a hold that outlives its client can be spotted. */
  ended: "finished" | "time_up" | "client_gone" | "shutdown";
}

/** First pause between reads of the store, doubled up to the last: short runs answer quickly, long ones cost few reads. */
const FIRST_POLL_MS = 50;
const LAST_POLL_MS = 1_000;

/**
 * Holds a run request until its run ends, for at most `seconds`. The state
 * store is the truth: with PostgreSQL the run may execute on another daemon,
 * so the record is read there; the local queue's `finished` event only wakes
 * the read early. `stop` aborts when the client hangs up or the API closes.
 */
export async function awaitRun(
  deps: { store: Pick<StateStore, "getRun">; queue: Pick<RunQueue, "on"> },
  id: string,
  seconds: number,
  stop: AbortSignal,
): Promise<WaitOutcome> {
  const deadline = Date.now() + seconds * 1000;
  let pause = FIRST_POLL_MS;
  for (;;) {
    const record = await deps.store.getRun(id);
    if (record?.finished) return { state: "finished", record, ended: "finished" };
    const left = deadline - Date.now();
    if (left <= 0 || stop.aborted) {
      const ended = stop.aborted ? stopReason(stop) : "time_up";
      return { state: record ? "running" : "queued", record, ended };
    }
    await pauseFor(Math.min(pause, left), id, deps.queue, stop);
    pause = Math.min(pause * 2, LAST_POLL_MS);
  }
}

function stopReason(stop: AbortSignal): WaitOutcome["ended"] {
  return stop.reason === "shutdown" ? "shutdown" : "client_gone";
}

/** Resolves after `ms`, when this daemon finishes the run, or on `stop`; leaves no timer or listener behind. */
function pauseFor(ms: number, id: string, queue: Pick<RunQueue, "on">, stop: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      off();
      stop.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const off = queue.on("finished", (event) => {
      if (event.run.id === id) done();
    });
    stop.addEventListener("abort", done, { once: true });
  });
}
