import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { silentLogger, type Logger } from "../log.js";
import { listenFailure } from "../listen-check.js";
import { registerSecret } from "../secrets.js";
import { metaValue, openDb, servicePaths } from "./db.js";
import { ItemStore } from "./item-store.js";
import { JobWaits } from "./job-waits.js";
import { LogStore } from "./log-store.js";
import { OrderStore } from "./order-store.js";
import { Presigner, PRESIGN_TTL_SECONDS } from "./presign.js";
import { BulkQueue } from "./bulk-worker.js";
import { ExportRunner } from "./export-writer.js";
import { buildServer } from "./server.js";
import { DEFAULT_LIMITS } from "../http/throttle.js";
import type { ServiceContext } from "./context.js";
import { WebhookDispatcher } from "./webhook-dispatch.js";
import { WebhookStore } from "./webhook-store.js";

export { loadItemsCsv } from "./load.js";

export interface EmbeddedServiceOptions {
  dataDir: string;
  /** 0 = any free port (the default here; `conveyor daemon` and `conveyor service` pass CONVEYOR_SERVICE_LISTEN). */
  port?: number;
  host?: string;
  /** The setting a person changes when the port is taken, quoted in the error. */
  listenSetting?: string;
  /** The account's credentials; when absent, user `demo` and a token generated once in the data folder. */
  apiUser?: string;
  apiToken?: string;
  readLimit?: number;
  writeLimit?: number;
  optionsLimit?: number;
  logger?: Logger;
  /** Bulk rows per transaction (default 200). */
  bulkBatchRows?: number;
  /** Pause between bulk batches, for tests that watch a job run or cancel it (default 0). */
  bulkBatchDelayMs?: number;
  /** Validity of presigned links in seconds (default 1800). */
  presignTtlSeconds?: number;
  /** How long a status request waits for its unfinished job to end (default job-waits.ts STATUS_HOLD_MS). */
  statusHoldMs?: number;
  /** The service's clock, for tests of expiry and throttling windows. */
  now?: () => number;
  /** Ids from which an export of every item's named fields reads in threads (default export-writer.ts THREADED_FROM); tests lower it. */
  exportThreadsFrom?: number;
  /** Waits between webhook attempts (default webhook-dispatch.ts RETRY_DELAYS_MS); tests shorten them. */
  webhookRetryDelaysMs?: readonly number[];
}

export interface EmbeddedService {
  /** Base URL without /v1 or /v3, e.g. `http://127.0.0.1:41234`. */
  url: string;
  apiUser: string;
  apiToken: string;
  /** Where a generated token is kept, and whether this start generated it (absent: the options gave the token). */
  generatedToken?: { file: string; isNew: boolean };
  /** Direct store access for tests, the loader and the pipeline's own checks. */
  context: ServiceContext;
  close(): Promise<void>;
}

export const DEFAULT_API_USER = "demo";

export function embeddedTokenFile(dataDir: string): string {
  return path.join(servicePaths(dataDir).root, "api-token");
}

/** The generated token of the embedded account, kept with mode 0600 so a restart keeps the same credentials. */
export function embeddedToken(dataDir: string): { token: string; isNew: boolean } {
  const file = embeddedTokenFile(dataDir);
  if (existsSync(file)) {
    const token = readFileSync(file, "utf8").trim();
    // Narrowed at every start, not only at creation: a copy or a restore may have widened it.
    chmodSync(file, 0o600);
    if (token) return { token, isNew: false };
  }
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const token = randomBytes(24).toString("hex");
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { token, isNew: true };
}

export async function startEmbeddedService(options: EmbeddedServiceOptions): Promise<EmbeddedService> {
  const apiUser = options.apiUser ?? DEFAULT_API_USER;
  const generated = options.apiToken === undefined ? embeddedToken(options.dataDir) : undefined;
  const apiToken = options.apiToken ?? generated?.token ?? "";
  registerSecret(apiToken);
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const paths = servicePaths(options.dataDir);
  const db = openDb(paths);
  let baseUrl = "";
  const items = new ItemStore(db);
  const logs = new LogStore(db, now);
  const orders = new OrderStore(db);
  const presign = new Presigner(metaValue(db, "presign_key"), paths.files, () => baseUrl, now, options.presignTtlSeconds ?? PRESIGN_TTL_SECONDS);
  const webhookStore = new WebhookStore(db);
  const webhooks = new WebhookDispatcher(webhookStore, { account: apiUser, now, logger, ...(options.webhookRetryDelaysMs ? { retryDelaysMs: options.webhookRetryDelaysMs } : {}) });
  orders.listen((before, after) => webhooks.orderChanged(before, after));
  const waits = new JobWaits(options.statusHoldMs);
  const context = { db, paths, items, logs, orders, presign, waits, logger, now, webhookStore, webhooks } as Omit<ServiceContext, "bulk" | "exports"> as ServiceContext;
  context.bulk = new BulkQueue(context, { batchRows: options.bulkBatchRows ?? 200, delayMs: options.bulkBatchDelayMs ?? 0 });
  context.exports = new ExportRunner(context, options.exportThreadsFrom === undefined ? {} : { threadedFrom: options.exportThreadsFrom });

  const app = await buildServer(context, { apiUser, apiToken }, {
    read: options.readLimit ?? DEFAULT_LIMITS.read,
    write: options.writeLimit ?? DEFAULT_LIMITS.write,
    options: options.optionsLimit ?? DEFAULT_LIMITS.options,
  });
  const host = options.host ?? "127.0.0.1";
  try {
    await app.listen({ port: options.port ?? 0, host });
  } catch (err) {
    db.close();
    const setting = options.listenSetting ?? "CONVEYOR_SERVICE_LISTEN / --service-listen";
    throw listenFailure({ address: { host, port: options.port ?? 0 }, what: "the embedded service", setting }, err);
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : options.port ?? 0;
  baseUrl = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  logger.info({ url: baseUrl, apiUser }, "embedded service listening");
  // Deliveries a stopped service still owed.
  webhooks.pump();

  return {
    url: baseUrl,
    apiUser,
    apiToken,
    ...(generated ? { generatedToken: { file: embeddedTokenFile(options.dataDir), isNew: generated.isNew } } : {}),
    context,
    async close() {
      await context.bulk.stop();
      await context.exports.stop();
      // Jobs still queued will not run in this process: their status requests answer now.
      waits.releaseAll();
      await webhooks.stop();
      await app.close();
      db.close();
    },
  };
}
