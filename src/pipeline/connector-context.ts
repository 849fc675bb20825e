import type { ConnectorContext } from "../../connectors/types.js";
import type { RunEnvironment, RunOptions } from "./environment.js";
import { metadataStore } from "./metadata.js";

/** What a run's connector gets: settings, logger, the automation's metadata, the account, the run's signal and clock. */
export async function connectorContext(env: RunEnvironment, options: RunOptions, now: () => Date): Promise<ConnectorContext> {
  return {
    settings: env.settings,
    logger: env.logger,
    metadata: await metadataStore(env.store, options.key, env.secretKey),
    apiUser: env.account,
    ...(options.signal ? { signal: options.signal } : {}),
    verbose: options.verbose ?? false,
    now: () => now().getTime(),
  };
}
