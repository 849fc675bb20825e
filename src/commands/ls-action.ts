import type { Command } from "commander";
import Table from "cli-table3";
import { createConnector } from "../../connectors/index.js";
import type { RemoteFile } from "../../connectors/types.js";
import { loadSecretKey, resolveAutomation } from "../definition/index.js";
import { ConveyorError } from "../errors.js";
import { createLogger } from "../log.js";
import { chooseFiles, ledgerKey } from "../pipeline/import/fetch.js";
import { metadataStore } from "../pipeline/metadata.js";
import { newRunId } from "../pipeline/recorder.js";
import { openStore } from "../state/index.js";
import { DEFAULT_API_USER } from "../embedded/index.js";
import { targetOf } from "./run-target.js";
import { EXIT, runCommand } from "./context.js";
import { applyParams } from "./params.js";
import { settingsFrom } from "./settings-from.js";

interface Listed {
  config: number;
  name: string;
  size: number;
  modified: string | null;
  status: string;
}

function row(config: number, file: RemoteFile, status: string): Listed {
  return { config, name: file.name, size: file.size, modified: file.modified ? file.modified.toISOString() : null, status };
}

/** What `conveyor ls` does; ls.ts declares its arguments and options. */
export async function lsAction(arg: string, flags: { json?: boolean; verbose?: boolean; param?: string[] }, command: Command): Promise<void> {
  await runCommand(Boolean(flags.json), async () => {
    const settings = settingsFrom(command);
    const logger = createLogger({ level: flags.verbose ? "debug" : "warn" });
    const store = await openStore(settings);
    try {
      // The run's identity: a stored automation's ledger and metadata are under its id, its storage is its account's.
      const target = await targetOf(arg, settings, store, settings.apiUser ?? DEFAULT_API_USER, logger);
      const raw = applyParams(target.automation, flags.param ?? []);
      const automation = resolveAutomation(raw, { runId: newRunId(), now: new Date(), secretKey: loadSecretKey(settings) });
      if (!automation.connection) throw new ConveyorError("usage", "the automation has no connection to list");
      const connector = createConnector(automation.connection, {
        settings,
        logger,
        metadata: await metadataStore(store, target.key, loadSecretKey(settings)),
        apiUser: target.stored?.account ?? settings.apiUser ?? DEFAULT_API_USER,
        verbose: Boolean(flags.verbose),
      });
      try {
        const facts = await connector.test();
        const listed: Listed[] = [];
        if (automation.action === "import") {
          for (const [index, config] of automation.file_configs.entries()) {
            const chosen = await chooseFiles({ connector, config, store, ledger: ledgerKey(target.key, index), now: Date.now, stabilityPollMs: 0 });
            for (const f of chosen.picked) listed.push(row(index, f, "picked"));
            for (const f of chosen.young) listed.push(row(index, f, "too young (would wait until its size settles)"));
            for (const s of chosen.skipped) listed.push(row(index, s.file, s.reason));
          }
        } else {
          for (const f of await connector.list()) listed.push(row(-1, f, "in the export folder"));
        }
        if (flags.json) process.stdout.write(`${JSON.stringify({ connection: facts.facts, files: listed })}\n`);
        else {
          process.stdout.write(`connected: ${Object.entries(facts.facts).map(([k, v]) => `${k}=${v}`).join(", ")}\n`);
          const table = new Table({ head: ["config", "name", "size", "modified", "status"], style: { head: [], border: [] } });
          for (const l of listed) table.push([l.config < 0 ? "-" : String(l.config), l.name, String(l.size), l.modified ?? "?", l.status]);
          process.stdout.write(`${listed.length ? table.toString() : "(no files)"}\n`);
        }
        return EXIT.ok;
      } finally {
        await connector.close().catch(() => undefined);
      }
    } finally {
      await store.close();
    }
  });
}
