import type { Settings } from "../config.js";
import { AccountStore } from "../daemon/accounts.js";
import { openDaemonDb } from "../daemon/daemon-db.js";
import { Environments } from "../daemon/environments.js";
import { loadSecretKey } from "../definition/index.js";
import type { Logger } from "../log.js";
import type { RunEnvironment } from "../pipeline/environment.js";
import { openLimiter } from "../service/limiter-for.js";
import type { StateStore } from "../state/index.js";
import type { Worker } from "../worker.js";
import { resolveRunTarget, type RunTarget } from "./automation-arg.js";

/** What `conveyor run <file-or-id>` names, read from the daemon's tables in the state database the CLI uses. */
export async function targetOf(arg: string, settings: Settings, store: StateStore, account: string, logger: Logger): Promise<RunTarget> {
  const db = openDaemonDb(settings, store);
  try {
    return await resolveRunTarget(arg, settings, db, account, logger);
  } finally {
    await db.close();
  }
}

export interface RunAccount {
  env: RunEnvironment;
  close(): Promise<void>;
}

/**
 * A stored automation runs as its account, as the daemon runs it: the CLI's
 * own account (the embedded service's `demo`, or the settings' API user)
 * when it is that one, else the account's credentials from the daemon's
 * accounts, decrypted with the secret key, against the same service.
 */
export async function runAccount(worker: Worker, target: RunTarget, settings: Settings, logger: Logger): Promise<RunAccount> {
  const account = target.stored?.account;
  if (account === undefined || account === worker.env.account) return { env: worker.env, close: async () => undefined };
  const secretKey = worker.env.secretKey ?? loadSecretKey(settings);
  const baseUrl = worker.embedded?.url ?? settings.serviceUrl ?? "";
  const limits = await openLimiter(settings, logger);
  const db = openDaemonDb(settings, worker.env.store);
  try {
    const environments = new Environments({ settings, store: worker.env.store, accounts: new AccountStore(db.accounts, secretKey), baseUrl, logger, secretKey, limiter: limits.limiter });
    const env = await environments.forAccount(account);
    return { env, close: () => limits.close() };
  } catch (err) {
    await limits.close();
    throw err;
  } finally {
    await db.close();
  }
}
