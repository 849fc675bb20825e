import type { Command } from "commander";
import { createLogger } from "../log.js";
import { loadItemsCsv, startEmbeddedService } from "../embedded/index.js";
import { ConveyorError } from "../errors.js";
import { checkListenAddresses } from "../listen-check.js";
import { EXIT, runCommand } from "./context.js";
import { settingsFrom } from "./settings-from.js";

/** What `conveyor service` does; service.ts declares its arguments and options. */
export async function serviceAction(opts: { port?: string; json?: boolean }, cmd: Command): Promise<void> {
  await runCommand(opts.json === true, async () => {
    const settings = settingsFrom(cmd);
    const port = opts.port === undefined ? settings.serviceListen.port : Number(opts.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConveyorError("usage", `--port must be a port number 0-65535, not ${opts.port}`);
    const listenSetting = "--port or CONVEYOR_SERVICE_LISTEN / --service-listen";
    // Before the service's database is made in the data folder.
    await checkListenAddresses([{ address: { host: settings.serviceListen.host, port }, what: "the embedded service", setting: listenSetting }]);
    const logger = createLogger({ level: settings.logLevel, name: "service" });
    const svc = await startEmbeddedService({
      dataDir: settings.dataDir,
      host: settings.serviceListen.host,
      port,
      listenSetting,
      apiUser: settings.apiUser,
      apiToken: settings.apiToken,
      readLimit: settings.readLimit,
      writeLimit: settings.writeLimit,
      logger,
    });
    const info = { url: svc.url, apiUser: svc.apiUser, apiToken: svc.apiToken, dataDir: settings.dataDir };
    // The token is printed on purpose: this command exists to hand the credentials to the person running it.
    if (opts.json) process.stdout.write(`${JSON.stringify(info)}\n`);
    else process.stdout.write(`embedded service at ${svc.url}\n  API user:  ${svc.apiUser}\n  API token: ${svc.apiToken}\n  data:      ${settings.dataDir}\nCtrl-C stops it.\n`);
    await new Promise<void>((resolve) => {
      const stop = (): void => resolve();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    await svc.close();
    return EXIT.ok;
  });
}

/** What `conveyor service load` does; service.ts declares its arguments and options. */
export async function loadAction(file: string, _opts: unknown, cmd: Command): Promise<void> {
  // --json may be taken by `service` itself when written after the file: read it from both levels.
  const json = cmd.optsWithGlobals<{ json?: boolean }>().json === true;
  await runCommand(json, async () => {
    const settings = settingsFrom(cmd);
    const result = await loadItemsCsv(settings.dataDir, file);
    if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      process.stdout.write(`loaded ${result.created + result.updated} of ${result.rows} products (${result.created} new, ${result.updated} updated, ${result.failed} failed)\n`);
      for (const e of result.errors) process.stdout.write(`  ${e}\n`);
    }
    return result.failed > 0 ? EXIT.partial : EXIT.ok;
  });
}
