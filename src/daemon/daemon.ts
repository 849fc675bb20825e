import path from "node:path";
import type { FastifyInstance } from "fastify";
import { closeSmtpPools } from "../../connectors/smtp-pool.js";
import { nativeWarning } from "../../connectors/native.js";
import type { Settings } from "../config.js";
import { loadSecretKey } from "../definition/index.js";
import { startEmbeddedService, type EmbeddedService, type EmbeddedServiceOptions } from "../embedded/index.js";
import { ConveyorError } from "../errors.js";
import { DaemonEvents } from "../events/index.js";
import type { Logger } from "../log.js";
import { openLimiter } from "../service/limiter-for.js";
import { openStore, PostgresStore, type RunRecord, type StateStore } from "../state/index.js";
import { privateStorage, privateUmask } from "../state/private-files.js";
import { AccountStore } from "./accounts.js";
import { buildApi, API_LIMITS } from "./api/server.js";
import { registerConsole } from "../console/index.js";
import type { RateLimits } from "../http/throttle.js";
import { Catalogue } from "./catalogue.js";
import { checkSharedSecretKey, openDaemonDb, type DaemonDb } from "./daemon-db.js";
import { DefinitionService } from "./definitions.js";
import { joinCluster } from "./cluster/join.js";
import { Environments } from "./environments.js";
import { DaemonExecutor } from "./executor.js";
import { recoverQueue, removeWorkFolders, startInterruptSweep } from "./lifecycle.js";
import { Metrics } from "./metrics.js";
import { Notifier } from "./notify.js";
import { RunQueue, type DrainResult, type EnqueueResult } from "./queue.js";
import { Scheduler } from "./scheduler.js";
import { sealStoredDefinitions } from "./seal-migration.js";
import { startRetention } from "./retention.js";
import { openSchedulerState } from "./scheduler-state.js";
import { attachRunLog, automationName, SampleSetup, silenceCandidates } from "./wiring.js";

export interface DaemonOptions {
  logger: Logger;
  /** Embedded service overrides (tests slow bulk jobs down or raise limits). */
  embedded?: Partial<EmbeddedServiceOptions>;
  apiLimits?: RateLimits;
  /** Interrupted-run sweep (lifecycle.ts): heartbeat age that counts as dead, and how often to look. */
  sweepStaleMs?: number;
  sweepEveryMs?: number;
  silenceCheckMs?: number;
  /** Console sign-in attempts per minute and address (default 20). */
  signInLimit?: number;
}

export interface Daemon {
  url: string;
  /** The account the embedded service registered (or the settings' API user), with its token. */
  defaultAccount: { apiUser: string; apiToken: string; generatedToken?: { file: string; isNew: boolean } } | null;
  embedded: EmbeddedService | undefined;
  store: StateStore;
  queue: RunQueue;
  definitions: DefinitionService;
  accounts: AccountStore;
  api: FastifyInstance;
  /** Runs on events: the intake's store, the claims, the coalescer and the endpoint registration (src/events/). */
  events: DaemonEvents;
  /** Stop scheduling, let runs finish for `graceMs`, cancel the rest, close everything. */
  shutdown(graceMs: number): Promise<DrainResult>;
  /** The second signal: cancel running runs now. */
  cancelAll(): void;
  /** Reads the published catalogue again (SIGHUP); the number of published automations it now holds. */
  reloadCatalogue(): Promise<number>;
}

/**
 * The daemon (`conveyor daemon`, `npm start`): the embedded service unless a
 * URL is set, the accounts, the definitions (and the samples on a fresh
 * machine), interrupted runs recovered, the scheduler and the queue, the
 * notifications, and the HTTP API on `settings.listen`.
 */
export async function startDaemon(settings: Settings, options: DaemonOptions): Promise<Daemon> {
  const { logger } = options;
  const native = nativeWarning();
  if (native) logger.warn({ event: "native_addon_missing" }, native);
  // Also here, not only in the CLI: a daemon started in-process (tests, embedding) writes the same files.
  privateUmask();
  const secretKey = loadSecretKey(settings);
  const store = await openStore(settings);
  privateStorage(settings.storage);
  const db: DaemonDb = openDaemonDb(settings, store);
  const accounts = new AccountStore(db.accounts, secretKey);
  let embedded: EmbeddedService | undefined;
  const closers: Array<() => Promise<void> | void> = [() => db.close(), () => store.close()];
  try {
    if (store instanceof PostgresStore) await checkSharedSecretKey(db, secretKey);
    const setup = new SampleSetup(settings, db, logger);
    if (settings.embedded) {
      await setup.seedProducts();
      embedded = await startEmbeddedService({ dataDir: settings.dataDir, host: settings.serviceListen.host, port: settings.serviceListen.port, apiUser: settings.apiUser, apiToken: settings.apiToken, readLimit: settings.readLimit, writeLimit: settings.writeLimit, logger, ...options.embedded });
      const service = embedded;
      closers.unshift(() => service.close());
      await accounts.ensure(embedded.apiUser, embedded.apiToken, "embedded");
    } else if (settings.apiUser && settings.apiToken) {
      await accounts.ensure(settings.apiUser, settings.apiToken, "settings");
    }
    const defaultAccount = embedded ? { apiUser: embedded.apiUser, apiToken: embedded.apiToken, ...(embedded.generatedToken ? { generatedToken: embedded.generatedToken } : {}) } : settings.apiUser && settings.apiToken ? { apiUser: settings.apiUser, apiToken: settings.apiToken } : null;
    const baseUrl = embedded?.url ?? settings.serviceUrl;
    if (!baseUrl) throw new ConveyorError("settings_invalid", "no service: set CONVEYOR_SERVICE_URL, or leave it unset for the embedded service");

    let scheduler: Scheduler | null = null;
    let events: DaemonEvents | null = null;
    const resync = (): void => {
      void definitions.schedulables(settings.eventCatchUpMs).then((list) => scheduler?.sync(list)).catch((err: unknown) => logger.error({ err }, "scheduler sync failed"));
      void events?.resync().catch((err: unknown) => logger.error({ err }, "event subscriptions sync failed"));
    };
    const catalogueFolder = settings.automations ? path.join(settings.automations, "published") : undefined;
    const catalogue = await Catalogue.load(catalogueFolder, logger);
    // Before anything reads a definition: an older database's clear connection secrets are sealed once, here.
    await sealStoredDefinitions(db.definitions, catalogue, secretKey, logger);
    const definitions = new DefinitionService(db.definitions, catalogue, secretKey, resync);
    if (settings.automations && defaultAccount) await setup.loadAutomations(definitions, defaultAccount.apiUser);

    const limits = await openLimiter(settings, logger);
    closers.push(() => limits.close());
    const environments = new Environments({ settings, store, accounts, baseUrl, logger, secretKey, limiter: limits.limiter });
    const finishedRuns: Array<(run: RunRecord) => Promise<void>> = [];
    const onFinished = async (run: RunRecord): Promise<void> => {
      for (const fn of finishedRuns) await fn(run).catch((err: unknown) => logger.error({ err }, "after-run step failed"));
    };
    let listenUrl: string | null = null;
    const daemonEvents: DaemonEvents = new DaemonEvents({
      store: db.events,
      definitions,
      logger,
      secretKey,
      windowMs: settings.eventWindowMs,
      getRun: (id) => store.getRun(id),
      isQueued: (id: string): boolean => queue.list().some((run) => run.id === id),
      enqueue: async (request): Promise<EnqueueResult> => (cluster ? cluster.intake.enqueue(request) : queue.enqueue(request)),
      clientFor: async (account) => (await environments.forAccount(account)).client,
      // The embedded service runs on this machine and reaches the listen address; an external one needs to be told.
      publicUrl: () => settings.publicUrl ?? (embedded ? listenUrl : null),
    });
    events = daemonEvents;
    const executor = new DaemonExecutor({ definitions, environments, store, logger, onFinished, events: daemonEvents.claims });
    // SQLite only: with PostgreSQL the cluster's shared queue keeps the runs that wait.
    const journal = db.queue;
    const queue = new RunQueue({ executor, concurrency: settings.concurrency, maxRunTimeMs: settings.maxRunTimeMs, logger, ...(journal ? { journal } : {}) });
    const schedulerState = openSchedulerState(settings, store);
    closers.push(() => schedulerState.close());
    // With PostgreSQL: runs go through the cluster's shared queue, and each fire time is claimed once across daemons.
    const cluster = await joinCluster(settings, { queue, store, schedulerState, logger, resync });
    if (cluster) closers.unshift(() => cluster.close());
    scheduler = new Scheduler({ queue, intake: cluster?.intake, state: schedulerState, fullRunEveryMs: settings.fullRunEveryMs, logger });
    const activeScheduler = scheduler;
    const metrics = new Metrics({
      queueDepth: () => queue.depth(),
      nextRuns: () => activeScheduler.scheduled().map((automation) => ({ automation, next: activeScheduler.nextFire(automation) })),
      ...(cluster ? { clusterDepth: () => cluster.depth() } : {}),
    });
    const notifications = new Notifier({ settings, store, db, logger, metrics });
    finishedRuns.push(async (run) => metrics.observeRun(run));
    // Awaited inside the run's slot, so a graceful shutdown still sends the mails of the runs it let finish.
    finishedRuns.push(async (run) => notifications.afterRun(run, await automationName(definitions, run.automation)));
    attachRunLog(queue, logger);
    // Events that came while the automation ran (or while its run waited and was dropped) get the next run.
    queue.on("finished", (e) => daemonEvents.runFinished(e.run.automation));
    // Written before the state closes: a canceled waiting run (and, in a cluster, one a shutdown drops) must still lead to a record.
    const notStarted = new Set<Promise<void>>();
    if (!cluster) {
      queue.on("finished", (e) => {
        if (e.started) return;
        const written = executor
          .recordNotStarted(e.run, e.reason)
          .catch((err: unknown) => logger.error({ err, run_id: e.run.id }, "the record of a canceled run could not be written"))
          .finally(() => notStarted.delete(written));
        notStarted.add(written);
      });
    }

    const staleMs = options.sweepStaleMs ?? 60_000;
    // A killed run's work folder holds its bulk files with the real values, secrets included: nothing reads it again.
    const onInterrupted = (runs: RunRecord[]): void => {
      logger.warn({ event: "runs_interrupted", runs: runs.map((r) => r.id) }, "runs left open by a stopped daemon marked failed (interrupted)");
      void removeWorkFolders(settings.dataDir, runs).catch((err: unknown) => logger.error({ err }, "the work folders of interrupted runs could not be removed"));
    };
    if (journal) {
      // Awaited before the scheduler, the API and /readyz: no run starts, and no client sees the daemon ready, before the old runs are settled.
      const recovered = await recoverQueue(store, journal, new Date(Date.now() - staleMs));
      if (recovered.interrupted.length > 0) onInterrupted(recovered.interrupted);
      if (recovered.unreadable.length > 0) logger.error({ event: "runs_unreadable", runs: recovered.unreadable }, "queued runs that could not be read back were dropped");
      if (recovered.requeue.length > 0) logger.info({ event: "runs_requeued", runs: recovered.requeue.map((e) => e.run.id) }, "runs queued before the restart queued again");
      queue.restore(recovered.requeue);
    }
    const stopSweep = startInterruptSweep(store, {
      staleMs,
      everyMs: options.sweepEveryMs ?? 60_000,
      onRecovered: onInterrupted,
      onError: (err) => logger.error({ err }, "interrupted-run sweep failed"),
    });
    // After the queue is recovered: a claim of a run queued again is left to that run.
    await daemonEvents.prepare();
    const stopRetention = startRetention({ store, schedulerState, events: db.events, dataDir: settings.dataDir, retentionMs: settings.runRetentionMs, logger });
    const silenceTimer = setInterval(() => void silenceCandidates(definitions).then((list) => notifications.checkSilence(list)).catch(() => undefined), options.silenceCheckMs ?? 10 * 60_000);
    silenceTimer.unref();

    let ready = false;
    const apiContext = { settings, definitions, accounts, store, queue, intake: cluster?.intake, metrics, events: daemonEvents.intake(metrics), rotateWebhookSecret: (account: string) => daemonEvents.registrar.rotate(account), logger, now: () => new Date(), ready: () => ready, secretKey };
    const api = await buildApi(apiContext, options.apiLimits ?? API_LIMITS);
    const limiter = limits.limiter;
    registerConsole(api, {
      ...apiContext,
      sessions: db.sessions,
      nextFire: (key) => activeScheduler.nextFire(key),
      ...(limiter.usage ? { rateUsage: async (account: string) => ({ read: await limiter.usage?.(account, "read") ?? { limit: settings.readLimit, used: 0 }, write: await limiter.usage?.(account, "write") ?? { limit: settings.writeLimit, used: 0 } }) } : {}),
      ...(cluster ? { cluster } : {}),
      ...(options.signInLimit !== undefined ? { signInLimit: options.signInLimit } : {}),
    });
    await activeScheduler.sync(await definitions.schedulables(settings.eventCatchUpMs));
    await api.listen({ host: settings.listen.host, port: settings.listen.port });
    const address = api.server.address();
    const port = typeof address === "object" && address ? address.port : settings.listen.port;
    const host = settings.listen.host.includes(":") ? `[${settings.listen.host}]` : settings.listen.host;
    listenUrl = `http://${host}:${port}`;
    daemonEvents.start();
    ready = true;

    let shuttingDown: Promise<DrainResult> | null = null;
    return {
      url: listenUrl,
      defaultAccount,
      embedded,
      store,
      queue,
      definitions,
      accounts,
      api,
      events: daemonEvents,
      cancelAll: () => queue.cancelAll("shutdown"),
      async reloadCatalogue() {
        // A file that no longer validates is logged and left out by load(); installed automations of it then refuse to run, naming it.
        const catalogue = await Catalogue.load(catalogueFolder, logger);
        definitions.setCatalogue(catalogue);
        return catalogue.list().length;
      },
      shutdown(graceMs: number) {
        shuttingDown ??= (async () => {
          await activeScheduler.stop();
          daemonEvents.stop();
          clearInterval(silenceTimer);
          stopRetention();
          stopSweep();
          await cluster?.stopFetching();
          const result = await queue.drain(graceMs);
          if (result.kept > 0) logger.info({ event: "runs_kept", runs: queue.list().map((r) => r.id) }, "waiting runs kept for the next start");
          await Promise.all(notStarted);
          await activeScheduler.close();
          await api.close();
          closeSmtpPools();
          for (const close of closers) await close();
          return result;
        })();
        return shuttingDown;
      },
    };
  } catch (err) {
    for (const close of closers) await Promise.resolve(close()).catch(() => undefined);
    throw err;
  }
}
