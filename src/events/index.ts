import type { Logger } from "../log.js";
import type { EnqueueResult } from "../daemon/queue.js";
import type { DefinitionService } from "../daemon/definitions.js";
import type { RunRequest } from "../daemon/types.js";
import type { ServiceClient } from "../service/index.js";
import type { RunRecord } from "../state/index.js";
import { EventClaims } from "./claims.js";
import { Coalescer } from "./coalescer.js";
import type { IntakeDeps, WebhookResult } from "./intake.js";
import { Registrar } from "./registration.js";
import type { EventStore } from "./store.js";
import { Subscriptions } from "./subscriptions.js";

export { EventClaims, MAX_ATTEMPTS, MAX_BATCH } from "./claims.js";
export { Coalescer } from "./coalescer.js";
export { registerIntake, MAX_WEBHOOK_BYTES, type WebhookResult } from "./intake.js";
export { Registrar, intakeUrl, INTAKE_PATH, type CheckReport } from "./registration.js";
export { verifySignature, TIMESTAMP_TOLERANCE_MS } from "./signature.js";
export type { EventStore, ClaimRow, Registration } from "./store.js";

export interface DaemonEventsOptions {
  store: EventStore;
  definitions: DefinitionService;
  logger: Logger;
  secretKey: Buffer;
  /** CONVEYOR_EVENT_WINDOW. */
  windowMs: number;
  getRun: (id: string) => Promise<RunRecord | null>;
  /** The run waits or runs in this daemon's queue. */
  isQueued: (id: string) => boolean;
  enqueue: (request: RunRequest) => Promise<EnqueueResult>;
  clientFor: (account: string) => Promise<ServiceClient>;
  publicUrl: () => string | null;
  /** How often the endpoints are checked at the service (default 5 min) and forgotten claims looked for (default 1 min). */
  registrationEveryMs?: number;
  sweepEveryMs?: number;
  now?: () => number;
}

/**
 * How long events wait for an automation that no longer exists before the
 * sweep drops them: another daemon of a cluster may have recorded them for a
 * definition this daemon has not read yet.
 */
export const ORPHAN_GRACE_MS = 60 * 60_000;

/**
 * The daemon's side of runs on events, in one place: the subscriptions read
 * from the definitions, the intake's parts, the claims the executor takes and
 * settles, the coalescer, the endpoint registration, and a sweep that settles
 * claims no run will settle and arms automations whose events still wait.
 */
export class DaemonEvents {
  readonly store: EventStore;
  readonly subscriptions: Subscriptions;
  readonly claims: EventClaims;
  readonly coalescer: Coalescer;
  readonly registrar: Registrar;
  private sweepTimer: NodeJS.Timeout | undefined;
  private wanted = "";

  constructor(private readonly options: DaemonEventsOptions) {
    const { store, definitions, logger } = options;
    this.store = store;
    this.subscriptions = new Subscriptions(definitions, logger);
    this.claims = new EventClaims({ store, logger, getRun: options.getRun, isActive: async (id) => options.isQueued(id) || (await store.runHeld(id)) });
    this.coalescer = new Coalescer({
      windowMs: options.windowMs,
      enqueue: options.enqueue,
      // An automation no longer on events (deleted, paused, its list emptied) starts nothing; its claims wait, unrun.
      accountOf: async (automation) => this.subscriptions.all().find((s) => s.key === automation)?.account ?? null,
      hasPending: (automation) => store.hasPending(automation),
      logger,
    });
    this.registrar = new Registrar({ store, subscriptions: this.subscriptions, clientFor: options.clientFor, publicUrl: options.publicUrl, secretKey: options.secretKey, logger });
  }

  /** What the API's intake route needs. */
  intake(metrics: { observeWebhook(result: WebhookResult): void }, now: () => number = Date.now): IntakeDeps {
    return { secretsFor: (key) => this.registrar.secretsFor(key), subscriptions: this.subscriptions, store: this.store, coalescer: this.coalescer, metrics, logger: this.options.logger, now };
  }

  /** Before the API listens: subscriptions read, claims of runs that ended without settling them settled. */
  async prepare(): Promise<void> {
    await this.subscriptions.refresh();
    await this.claims.recover();
    this.wanted = JSON.stringify([...this.subscriptions.byAccount()]);
  }

  /** Once the API listens (the endpoint's address is known): endpoints checked, waiting events armed, the sweep started. */
  start(): void {
    this.registrar.start(this.options.registrationEveryMs ?? 5 * 60_000);
    void this.sweep();
    this.sweepTimer = setInterval(() => void this.sweep(), this.options.sweepEveryMs ?? 60_000);
    this.sweepTimer.unref();
  }

  /** The definitions changed: subscriptions read again, and the endpoints checked when the accounts' event types changed. */
  async resync(): Promise<void> {
    await this.subscriptions.refresh();
    const wanted = JSON.stringify([...this.subscriptions.byAccount()]);
    if (wanted === this.wanted) return;
    this.wanted = wanted;
    await this.registrar.check();
  }

  /** A run of the automation ended (or was dropped before it started). */
  runFinished(automation: string): void {
    void this.coalescer.finished(automation).catch((err: unknown) => this.options.logger.error({ err, automation }, "could not look for events waiting after a run"));
  }

  stop(): void {
    clearInterval(this.sweepTimer);
    this.registrar.stop();
    this.coalescer.stop();
  }

  /** Settles what no run will settle, drops what no automation will take, and arms the automations whose events wait. */
  async sweep(): Promise<void> {
    try {
      await this.claims.recover();
      this.coalescer.arm(await this.dropOrphans(await this.store.pendingAutomations()));
    } catch (err) {
      this.options.logger.error({ err }, "the sweep of waiting events failed; trying again later");
    }
  }

  /**
   * Pending claims of a deleted automation would wait forever (a paused one's
   * wait for it to be switched on again): past the grace they become `failed`,
   * and retention forgets them with their events. Returns the automations that exist.
   */
  private async dropOrphans(pending: readonly string[]): Promise<string[]> {
    if (pending.length === 0) return [];
    const existing = new Set((await this.options.definitions.all()).map((stored) => String(stored.id)));
    const before = new Date((this.options.now?.() ?? Date.now()) - ORPHAN_GRACE_MS);
    const kept: string[] = [];
    for (const automation of pending) {
      if (existing.has(automation)) {
        kept.push(automation);
        continue;
      }
      const dropped = await this.store.dropPending(automation, before);
      if (dropped.length > 0) {
        this.options.logger.warn(
          { event: "events_dropped", automation, events: dropped },
          `${dropped.length} event(s) waited for automation ${automation}, which no longer exists; they are dropped and start no run`,
        );
      }
    }
    return kept;
  }
}
