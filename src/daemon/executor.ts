import { ConveyorError, toConveyorError } from "../errors.js";
import type { Logger } from "../log.js";
import { RunRecorder, runError } from "../pipeline/recorder.js";
import { runAutomation } from "../pipeline/run.js";
import { waitForAutomation, LOCK_LEASE_MS, lockHolder, type HeldLock, type RunRecord, type StateStore } from "../state/index.js";
import type { DefinitionService } from "./definitions.js";
import type { Environments } from "./environments.js";
import type { CancelReason } from "./queue.js";
import type { QueuedRun, RunEvents, RunExecutor } from "./types.js";

/** What an event run does with the events waiting for its automation (src/events/claims.ts). */
export interface EventBatches {
  take(automation: string, runId: string): Promise<RunEvents>;
  settle(runId: string, outcome: string): Promise<void>;
}

const NO_EVENTS_NOTE = "no events waiting; an earlier run took them";

/**
 * Runs a queued run through the pipeline. The definition is read when the run
 * starts and held for its whole length: an edit meanwhile changes the next
 * run, never the one in flight. A run that cannot start (the definition was
 * deleted or no longer validates, the account is gone) still gets a failed
 * record, so the id the API handed out always leads somewhere.
 *
 * Before it starts, a run takes its automation's lock in the state store, the
 * one `conveyor run` takes too: a run the queue lets through waits here while
 * a CLI run of the automation holds it (the queue's own rules stay as they
 * are). With PostgreSQL the cluster's dispatcher took that lock already.
 */
export class DaemonExecutor implements RunExecutor {
  constructor(
    private readonly options: {
      definitions: DefinitionService;
      environments: Environments;
      store: StateStore;
      logger: Logger;
      onFinished?: (run: RunRecord) => Promise<void>;
      /** A lock holder silent this long is dead (default LOCK_LEASE_MS). */
      lockLeaseMs?: number;
      /** How often a run waiting for a CLI run of its automation looks again (default 1 s). */
      lockPollMs?: number;
      /** Event runs take their batch here once the lock is held, and settle it when they end. */
      events?: EventBatches;
    },
  ) {}

  async execute(request: QueuedRun, signal: AbortSignal): Promise<{ outcome: string; error: { code: string; message: string } | null; note?: string }> {
    const { definitions, environments } = this.options;
    let record: RunRecord;
    let held: HeldLock | undefined;
    let taken: RunEvents | undefined;
    try {
      held = await this.hold(request, signal);
      const stored = await definitions.byKey(request.automation);
      if (!stored) throw new ConveyorError("definition_not_found", `automation ${request.automation} was deleted before its run started`);
      const { automation } = definitions.effective(stored);
      const env = await environments.forAccount(stored.account);
      const { mode, trigger, diff, force, notify, email, id } = runStart(request);
      const undo = request.undo ? { undo: request.undo } : {};
      // Taken at the start, under the lock: a run that waited takes what arrived meanwhile, and a running one nothing more.
      if (trigger === "event" && this.options.events) taken = await this.options.events.take(request.automation, request.id);
      if (taken && taken.ids.length === 0) record = await this.nothingWaiting(request);
      else record = await runAutomation(env, { key: request.automation, automation, mode, trigger, diff, force, notify, email, id, signal, ...undo, ...(taken ? { events: taken } : {}) });
    } catch (raw) {
      record = await this.failedBeforeStart(request, raw);
    } finally {
      await held?.release().catch((err: unknown) => this.options.logger.error({ err, run_id: request.id }, "could not release the automation's run lock; its lease runs out instead"));
    }
    if (taken && taken.ids.length > 0) {
      // Not settled (the database failed): the claims stay taken until the periodic recovery settles them by this record.
      await this.options.events?.settle(request.id, record.outcome ?? "failed").catch((err: unknown) => this.options.logger.error({ err, run_id: request.id }, "could not settle the run's events; the recovery does it later"));
    }
    await this.options.onFinished?.(record);
    return { outcome: record.outcome ?? "failed", error: record.error ? { code: record.error.code, message: record.error.message } : null, ...(record.note ? { note: record.note } : {}) };
  }

  /** The definition is read once the lock is held, so a run that waited starts with the definition of the moment it starts. */
  private async hold(request: QueuedRun, signal: AbortSignal): Promise<HeldLock> {
    let told = false;
    return waitForAutomation(this.options.store, { automation: request.automation, runId: request.id, holder: lockHolder("daemon") }, {
      leaseMs: this.options.lockLeaseMs ?? LOCK_LEASE_MS,
      signal,
      ...(this.options.lockPollMs ? { pollMs: this.options.lockPollMs } : {}),
      onWaiting: (lock) => {
        if (told) return;
        told = true;
        this.options.logger.info({ event: "run_waiting_for_lock", run_id: request.id, automation: request.automation, holder_run: lock.run_id, holder: lock.holder }, "the automation is running elsewhere (a conveyor run); this run starts when that one ends");
      },
    });
  }

  /** An event run whose events an earlier run took (requests folded together, or another daemon was first). */
  private async nothingWaiting(request: QueuedRun): Promise<RunRecord> {
    const recorder = await RunRecorder.start(this.options.store, runStart(request));
    recorder.noteIdle(NO_EVENTS_NOTE);
    return recorder.finish("nothing");
  }

  /**
   * A run canceled while it waited (on request, or by a shutdown) still gets a
   * record, so its id leads somewhere and says to run it again.
   */
  async recordNotStarted(request: QueuedRun, reason: CancelReason | null): Promise<void> {
    if (await this.options.store.getRun(request.id)) return;
    const message =
      reason === "shutdown" ? "the daemon stopped before the run started" : "the run was canceled before it started";
    const hint = request.fireTime ? "the daemon runs this fire time once when it starts again" : "ask for the run again";
    const recorder = await RunRecorder.start(this.options.store, runStart(request));
    await recorder.finish("canceled", { error: new ConveyorError("canceled", message, { hint, details: { reason } }) });
  }

  private async failedBeforeStart(request: QueuedRun, raw: unknown): Promise<RunRecord> {
    const error = startError(raw);
    this.options.logger.error({ run_id: request.id, automation: request.automation, code: error.code, err: error.message }, "run could not start");
    const existing = await this.options.store.getRun(request.id);
    if (existing?.finished) return existing;
    if (existing) {
      await this.options.store.updateRun(request.id, { finished: new Date().toISOString(), outcome: "failed", error: runError(error) });
      return (await this.options.store.getRun(request.id)) ?? existing;
    }
    const recorder = await RunRecorder.start(this.options.store, runStart(request));
    // Canceled while it waited for a CLI run of its automation: a cancel, not a failure.
    return recorder.finish(error.code === "canceled" ? "canceled" : "failed", { error });
  }
}

/**
 * Why a run could not start, as its record says it. An installed automation
 * whose published automation left the catalogue is a conflict to the API
 * (the request meets a state it cannot change) and, to the run, a definition
 * that no longer holds.
 */
function startError(raw: unknown): ConveyorError {
  const error = toConveyorError(raw);
  return error.code === "conflict" ? new ConveyorError("definition_invalid", error.message) : error;
}

function runStart(request: QueuedRun): Parameters<typeof RunRecorder.start>[1] {
  return {
    id: request.id,
    automation: request.automation,
    account: request.account,
    mode: request.mode,
    trigger: request.trigger,
    diff: request.diff,
    force: request.force,
    notify: request.notify,
    email: request.email,
  };
}
