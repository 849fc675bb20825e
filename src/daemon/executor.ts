import { HttpError } from "../embedded/envelopes.js";
import { ConveyorError, toConveyorError } from "../errors.js";
import type { Logger } from "../log.js";
import { RunRecorder, runError } from "../pipeline/recorder.js";
import { runAutomation } from "../pipeline/run.js";
import type { RunRecord, StateStore } from "../state/index.js";
import type { DefinitionService } from "./definitions.js";
import type { Environments } from "./environments.js";
import type { CancelReason } from "./queue.js";
import type { QueuedRun, RunExecutor } from "./types.js";

/**
 * Runs a queued run through the pipeline. The definition is read when the run
 * starts and held for its whole length: an edit meanwhile changes the next
 * run, never the one in flight. A run that cannot start (the definition was
 * deleted or no longer validates, the account is gone) still gets a failed
 * record, so the id the API handed out always leads somewhere.
 */
export class DaemonExecutor implements RunExecutor {
  constructor(
    private readonly options: {
      definitions: DefinitionService;
      environments: Environments;
      store: StateStore;
      logger: Logger;
      onFinished?: (run: RunRecord) => Promise<void>;
    },
  ) {}

  async execute(request: QueuedRun, signal: AbortSignal): Promise<{ outcome: string; error: { code: string; message: string } | null; note?: string }> {
    const { definitions, environments } = this.options;
    let record: RunRecord;
    try {
      const stored = await definitions.byKey(request.automation);
      if (!stored) throw new ConveyorError("definition_not_found", `automation ${request.automation} was deleted before its run started`);
      const { automation } = definitions.effective(stored);
      const env = await environments.forAccount(stored.account);
      const { mode, trigger, diff, force, notify, email, id } = runStart(request);
      record = await runAutomation(env, { key: request.automation, automation, mode, trigger, diff, force, notify, email, id, signal });
    } catch (raw) {
      record = await this.failedBeforeStart(request, raw);
    }
    await this.options.onFinished?.(record);
    return { outcome: record.outcome ?? "failed", error: record.error ? { code: record.error.code, message: record.error.message } : null, ...(record.note ? { note: record.note } : {}) };
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
    const error = raw instanceof HttpError ? new ConveyorError("definition_invalid", raw.message) : toConveyorError(raw);
    this.options.logger.error({ run_id: request.id, automation: request.automation, code: error.code, err: error.message }, "run could not start");
    const existing = await this.options.store.getRun(request.id);
    if (existing?.finished) return existing;
    if (existing) {
      await this.options.store.updateRun(request.id, { finished: new Date().toISOString(), outcome: "failed", error: runError(error) });
      return (await this.options.store.getRun(request.id)) ?? existing;
    }
    const recorder = await RunRecorder.start(this.options.store, runStart(request));
    return recorder.finish("failed", { error });
  }
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
