import type { Command } from "commander";
import { destination } from "pino";
import { startDaemon, type Daemon } from "../daemon/daemon.js";
import { installSignalHandlers } from "../daemon/lifecycle.js";
import { claimPidFile } from "../daemon/pid-file.js";
import { checkListenAddresses, listenFailure } from "../listen-check.js";
import { createLogger } from "../log.js";
import { describeRuntime } from "../runtime.js";
import { EXIT, runCommand } from "./context.js";
import { settingsFrom } from "./settings-from.js";

/**
 * The banner's token line. A token the daemon generated is printed on the
 * start that generated it and then only on demand (--show-token): standard
 * error is often kept by a service manager's journal, and a token printed at
 * every start would sit in every copy of it. One from the settings is never
 * printed: whoever set it has it.
 */
export function tokenLines(account: NonNullable<Daemon["defaultAccount"]>, fromSettings: boolean, showToken: boolean): string[] {
  if (fromSettings) return ["API token: (the one in CONVEYOR_API_TOKEN)"];
  const kept = account.generatedToken;
  if (!kept) return ["API token: (the one the settings gave)"];
  if (kept.isNew) return [`API token: ${account.apiToken}`, `(printed on this first start only: it is kept in ${kept.file}, and \`conveyor daemon --show-token\` prints it again)`];
  if (showToken) return [`API token: ${account.apiToken}`];
  return [`API token: kept in ${kept.file} (printed on the first start only; \`conveyor daemon --show-token\` prints it)`];
}

/** What `conveyor daemon` does; daemon.ts declares its arguments and options. */
export async function daemonAction(flags: { grace: string; showToken?: boolean }, command: Command): Promise<void> {
  await runCommand(false, async () => {
    const settings = settingsFrom(command);
    const graceMs = Math.max(0, Number(flags.grace) || 0) * 1000;
    // JSON lines on standard output, one per run event; pino masks secrets.
    const logger = createLogger({ level: settings.logLevel, destination: destination({ fd: 1, sync: true }) });
    const api = { address: settings.listen, what: "the daemon API", setting: "CONVEYOR_LISTEN / --listen" };
    // Before anything is written: a port in use must not leave a data folder, samples or accounts behind.
    await checkListenAddresses([api, ...(settings.embedded ? [{ address: settings.serviceListen, what: "the embedded service", setting: "CONVEYOR_SERVICE_LISTEN / --service-listen" }] : [])]);
    const pidFile = claimPidFile(settings.dataDir);
    // On every way out, process.exit included; a kill -9 leaves the file, and the next start replaces it.
    process.on("exit", () => pidFile.release());
    const daemon = await startDaemon(settings, { logger }).catch((err: unknown) => {
      // The port taken by another process between the check and the API's listen: the same message as the check's.
      throw (err as NodeJS.ErrnoException).code === "EADDRINUSE" ? listenFailure(api, err) : err;
    });
    const lines = [`Conveyor daemon listening on ${daemon.url}`, `Console:   ${daemon.url}/  (sign in with the API user and token)`, `Runtime:   ${describeRuntime()}`];
    logger.info({ event: "started", url: daemon.url, runtime: process.version, exec_path: process.execPath }, "daemon started");
    if (daemon.defaultAccount) {
      lines.push(`API user:  ${daemon.defaultAccount.apiUser}`, ...tokenLines(daemon.defaultAccount, settings.apiToken !== undefined, Boolean(flags.showToken)));
      lines.push(`Try: curl -H "X-Auth-User: ${daemon.defaultAccount.apiUser}" -H "X-Auth-Token: <token>" ${daemon.url}/v3/automations/custom`);
    }
    if (daemon.embedded) lines.push(`Embedded service on ${daemon.embedded.url}`);
    const reload = (): void => {
      void daemon.reloadCatalogue().then(
        (published) => logger.info({ event: "catalogue_reloaded", published }, "published catalogue read again"),
        (err: unknown) => logger.error({ err }, "reading the published catalogue failed; the previous one stays"),
      );
    };
    process.on("SIGHUP", reload);
    const stopped = new Promise<number>((resolve) => {
      installSignalHandlers({
        onFirst: (signal) => {
          process.off("SIGHUP", reload);
          logger.info({ event: "shutdown", signal, grace_ms: graceMs }, "stopping: no new runs; running runs may finish");
          void daemon.shutdown(graceMs).then(
            (result) => {
              logger.info({ event: "stopped", ...result }, "daemon stopped");
              resolve(EXIT.ok);
            },
            (err: unknown) => {
              logger.error({ err }, "shutdown failed");
              resolve(EXIT.failed);
            },
          );
        },
        onSecond: (signal) => {
          logger.warn({ event: "shutdown_forced", signal }, "second signal: canceling running runs now");
          daemon.cancelAll();
        },
      });
    });
    // Only now: whoever waits for the banner may signal at once, and must find the handlers in place.
    process.stderr.write(`${lines.join("\n")}\n`);
    return stopped;
  });
}
