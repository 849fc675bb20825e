import path from "node:path";
import { createConnector } from "../../../connectors/index.js";
import type { Connector, RemoteFile } from "../../../connectors/types.js";
import type { FileConfig } from "../../definition/index.js";
import { ConveyorError } from "../../errors.js";
import { connectorContext } from "../connector-context.js";
import { chooseFiles, describeListing, describeNothing, downloadFiles, ledgerEntry, ledgerKey, type FetchedFile } from "./fetch.js";
import type { RunContext } from "../run-context.js";
import { checkLocalFiles, copyLocalFile, localFilesFor, localListing } from "./local-files.js";

/**
 * Where an import's files come from: its connection (list, select, download;
 * after a live pass, the ledger and after_import), or the local files of
 * `conveyor run --file`, which are read as they are and left alone.
 */
export interface ImportSource {
  /** The files a config takes this run (none: nothing to do); a missing required file fails here. */
  choose(config: FileConfig, index: number): Promise<readonly RemoteFile[]>;
  /** Into the run's work folder, each with its size; its SHA-256 follows. */
  download(index: number, files: readonly RemoteFile[]): Promise<FetchedFile[]>;
  /** After a live pass applied the files without a fatal error. */
  finish(config: FileConfig, index: number, files: readonly FetchedFile[]): Promise<void>;
  /** What the connection learned that the run records (an accepted host key). */
  facts(): Record<string, string>;
  close(): Promise<void>;
}

export async function openImportSource(ctx: RunContext): Promise<ImportSource> {
  const given = ctx.options.localFiles ?? [];
  if (given.length > 0) {
    const listing = await localListing(given);
    checkLocalFiles(ctx.automation.file_configs, listing);
    return {
      choose: async (config) => localFilesFor(config, listing),
      download: (index, files) => downloadFiles({ download: copyLocalFile }, files, downloadFolder(ctx, index), ctx.debug.full),
      finish: async () => undefined,
      facts: () => ({}),
      close: async () => undefined,
    };
  }
  const connection = ctx.automation.connection;
  if (!connection) {
    throw new ConveyorError("definition_invalid", "an import needs a connection to fetch its files from", {
      details: { field: "connection" },
      hint: "Add a connection (ftp, ftps, sftp, sdsftp, sds3, http or email), or feed one run a local file with conveyor run --file <path>.",
    });
  }
  const connector = createConnector(connection, await connectorContext(ctx.env, ctx.options, ctx.now));
  return {
    choose: (config, index) => chooseFromConnection(ctx, connector, config, index),
    download: (index, files) => downloadFiles(connector, files, downloadFolder(ctx, index), ctx.debug.full),
    finish: (config, index, files) => finishFiles(ctx, connector, config, index, files),
    facts: () => connector.facts?.() ?? {},
    close: () => connector.close().catch(() => undefined),
  };
}

function downloadFolder(ctx: RunContext, index: number): string {
  return path.join(ctx.workDir, `config-${index + 1}`, "download");
}

async function chooseFromConnection(ctx: RunContext, connector: Connector, config: FileConfig, index: number): Promise<readonly RemoteFile[]> {
  const chosen = await chooseFiles({
    connector,
    config,
    store: ctx.env.store,
    ledger: ledgerKey(ctx.options.key, index),
    now: () => ctx.now().getTime(),
    signal: ctx.options.signal,
    stabilityPollMs: ctx.options.stabilityPollMs,
  });
  if (chosen.picked.length === 0) {
    if (config.require_file) {
      throw new ConveyorError("file_missing", `file_configs[${index}]: ${describeListing(chosen, config.name)}`, {
        hint: "Check the connection's path and the file config's name pattern; set require_file: false if an empty folder is normal.",
      });
    }
    ctx.recorder.noteIdle(`file_configs[${index}]: ${describeNothing(chosen, config)}`);
    return [];
  }
  return chosen.picked;
}

/** Ledger and after_import, only for files a live run applied without a fatal error. */
async function finishFiles(ctx: RunContext, connector: Connector, config: FileConfig, index: number, files: readonly FetchedFile[]): Promise<void> {
  await ctx.env.store.ledgerAdd(ledgerKey(ctx.options.key, index), files.map((f) => ledgerEntry(f.remote)));
  for (const f of files) {
    await connector.markProcessed?.(f.remote);
    const after = config.after_import;
    if (after === "delete") await connector.delete(f.remote);
    else if (after !== "keep") await connector.move(f.remote, after.move);
  }
}
