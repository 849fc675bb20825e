import type { Settings } from "./config.js";
import { loadSecretKey } from "./definition/index.js";
import type { EmbeddedService } from "./embedded/index.js";
import { ConveyorError } from "./errors.js";
import { createLogger, type Logger } from "./log.js";
import type { RunEnvironment } from "./pipeline/environment.js";
import { registerSecret } from "./secrets.js";
import { ServiceClient } from "./service/index.js";
import { openLimiter } from "./service/limiter-for.js";
import { openStore } from "./state/index.js";

/**
 * Everything a run needs, built once from the settings: the state store, the
 * service (the embedded one in-process unless a URL is set) and the account's
 * client sharing the process-wide rate limiter.
 */
export interface Worker {
  env: RunEnvironment;
  /** Set when the embedded service runs in this process. */
  embedded: EmbeddedService | undefined;
  close(): Promise<void>;
}

export async function openWorker(settings: Settings, logger: Logger = createLogger({ level: settings.logLevel })): Promise<Worker> {
  let embedded: EmbeddedService | undefined;
  let baseUrl = settings.serviceUrl;
  let apiUser = settings.apiUser;
  let apiToken = settings.apiToken;
  if (settings.embedded) {
    // Fastify and the service's own database load only when the service runs in this process.
    const { startEmbeddedService } = await import("./embedded/index.js");
    embedded = await startEmbeddedService({
      dataDir: settings.dataDir,
      // Nothing outside this process calls a CLI command's service, so it takes any free port and never
      // contends with a daemon holding CONVEYOR_SERVICE_LISTEN on the same machine.
      port: 0,
      apiUser,
      apiToken,
      readLimit: settings.readLimit,
      writeLimit: settings.writeLimit,
      logger,
    });
    baseUrl = embedded.url;
    apiUser = embedded.apiUser;
    apiToken = embedded.apiToken;
  }
  if (!baseUrl || !apiUser || !apiToken) {
    throw new ConveyorError("settings_invalid", "a remote service needs CONVEYOR_API_USER and CONVEYOR_API_TOKEN", {
      hint: "Set both, or unset CONVEYOR_SERVICE_URL to use the embedded service.",
    });
  }
  registerSecret(apiToken);
  const store = await openStore(settings);
  // With PostgreSQL a CLI run draws from the account's budget shared with every daemon on the database.
  const limits = await openLimiter(settings, logger).catch(async (err: unknown) => {
    await store.close();
    throw err;
  });
  const client = new ServiceClient({
    baseUrl,
    apiUser,
    apiToken,
    integration: settings.integration,
    limiter: limits.limiter,
    logger,
  });
  const env: RunEnvironment = { settings, store, client, account: apiUser, logger, secretKey: loadSecretKey(settings) };
  return {
    env,
    embedded,
    close: async () => {
      await store.close();
      await limits.close();
      await embedded?.close();
    },
  };
}
