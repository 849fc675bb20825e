import type { FastifyRequest } from "fastify";
import type { Settings } from "../../config.js";
import type { IntakeDeps } from "../../events/intake.js";
import { text } from "../../http/envelopes.js";
import type { Logger } from "../../log.js";
import type { StateStore } from "../../state/index.js";
import type { AccountStore } from "../accounts.js";
import type { DefinitionService } from "../definitions.js";
import type { Metrics } from "../metrics.js";
import type { EnqueueResult, RunInfo, RunQueue } from "../queue.js";
import type { RunRequest } from "../types.js";

/** What the API's routes share: the daemon's parts, handed in so tests can build the API alone. */
export interface ApiContext {
  settings: Settings;
  definitions: DefinitionService;
  accounts: AccountStore;
  store: StateStore;
  queue: RunQueue;
  /** Several daemons on one database: runs are queued in the cluster's shared queue instead of `queue`. */
  intake?: { enqueue(request: RunRequest): Promise<EnqueueResult>; waiting(id: string): Promise<RunInfo | null> };
  metrics: Metrics;
  logger: Logger;
  now: () => Date;
  /** The webhook intake (`POST /v3/events/webhook/{key}`); left out, the route does not exist. */
  events?: IntakeDeps;
  /** Rotates the account's webhook signing secret (Registrar.rotate); left out, the route does not exist. */
  rotateWebhookSecret?: (account: string) => Promise<{ endpoint: string } | null | "busy">;
  /** True once the scheduler runs and recovery is done: `/readyz`. */
  ready: () => boolean;
  /** Key of encrypted parameters, for routes that resolve a definition as a run would (a pushed feed's folder and names). */
  secretKey?: Buffer;
}

/** The account of an authenticated request: the auth hook has checked the pair already. */
export function accountOf(request: FastifyRequest): string {
  return text(request.headers["x-auth-user"]) ?? "";
}
