import type { Command } from "commander";
import { createLogger } from "../log.js";
import { loadItemsCsv, startEmbeddedService } from "../embedded/index.js";
import { ConveyorError } from "../errors.js";
import { checkListenAddresses } from "../listen-check.js";
import { EXIT, runCommand, settingsFrom } from "./context.js";

/**
 * `conveyor service [--port N]`: the embedded commerce service alone, in the
 * foreground, on CONVEYOR_SERVICE_LISTEN (the daemon's stable address) and the
 * settings' data folder; prints its base URL and credentials, stops on Ctrl-C. `conveyor service load <file.csv>` fills its
 * catalogue from a CSV with a guid column.
 */
export function register(program: Command): void {
  const service = program
    .command("service")
    .description("run the embedded commerce service alone (prints its URL, API user and token)")
    .option("--port <n>", "port to listen on (default: the port of CONVEYOR_SERVICE_LISTEN, 8081; 0: any free port)")
    .option("--json", "print the URL and credentials as JSON")
    .action(async (opts: { port?: string; json?: boolean }, cmd: Command) => {
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
    });

  service
    .command("load <file>")
    .description("load products from a CSV with a guid column into the embedded service's data")
    .option("--json", "print the counts as JSON")
    .action(async (file: string, _opts: unknown, cmd: Command) => {
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
    });
}
