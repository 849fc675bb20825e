import type { Settings } from "../config.js";
import { ConveyorError } from "../errors.js";
import type { Logger } from "../log.js";
import type { RunEnvironment } from "../pipeline/environment.js";
import { ServiceClient, sharedLimiter, type RateLimiter } from "../service/index.js";
import type { StateStore } from "../state/index.js";
import type { AccountStore } from "./accounts.js";

/**
 * One run environment per account (service.md, "Automations"): the account's
 * API user and token are its service credentials, and all its runs share its
 * read and write budget through the process-wide limiter, which keeps one
 * bucket per account. Rebuilt when the token changes (`accounts add` again).
 */
export class Environments {
  private readonly cache = new Map<string, { token: string; env: RunEnvironment }>();

  constructor(
    private readonly options: {
      settings: Settings;
      store: StateStore;
      accounts: AccountStore;
      baseUrl: string;
      logger: Logger;
      secretKey: Buffer;
      /** The cluster's limiter in PostgreSQL, shared by every daemon; the process-wide one otherwise. */
      limiter?: RateLimiter;
    },
  ) {}

  async forAccount(account: string): Promise<RunEnvironment> {
    const { settings, accounts, baseUrl, logger, store, secretKey } = this.options;
    const credentials = await accounts.credentials(account);
    if (!credentials) {
      throw new ConveyorError("auth", `account "${account}" is not registered with this daemon; its automations cannot run`, {
        hint: "add it again with `conveyor accounts add <user> --token <token>`",
      });
    }
    const cached = this.cache.get(account);
    if (cached && cached.token === credentials.apiToken) return cached.env;
    const client = new ServiceClient({
      baseUrl,
      apiUser: credentials.apiUser,
      apiToken: credentials.apiToken,
      integration: settings.integration,
      limiter: this.options.limiter ?? sharedLimiter({ read: settings.readLimit, write: settings.writeLimit }),
      logger,
    });
    const env: RunEnvironment = { settings, store, client, account, logger: logger.child({ account }), secretKey };
    this.cache.set(account, { token: credentials.apiToken, env });
    return env;
  }
}
