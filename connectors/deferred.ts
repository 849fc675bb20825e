import { ConveyorError } from "../src/errors.js";
import type { Connector } from "./types.js";

/**
 * A connector whose implementation loads with its first operation: the
 * libraries of the types (ssh2, basic-ftp, imapflow, nodemailer, the AWS SDK,
 * http's XML and JSONPath parsers) cost more to load than most runs take, and
 * a run or a command needs at most one or two of them. `open` loads the module and builds the real connector;
 * an error it throws is the first operation's error.
 */
export function deferredConnector(type: string, open: () => Promise<Connector>, options: { sendsRecords?: boolean } = {}): Connector {
  let real: Connector | undefined;
  let pending: Promise<Connector> | undefined;
  const get = (): Promise<Connector> =>
    (pending ??= open().then((connector) => {
      real = connector;
      return connector;
    }));
  const connector: Connector = {
    type,
    list: async (folder) => (await get()).list(folder),
    download: async (file, localPath) => (await get()).download(file, localPath),
    upload: async (localPath, remoteName, about) => (await get()).upload(localPath, remoteName, about),
    delete: async (file) => (await get()).delete(file),
    move: async (file, folder) => (await get()).move(file, folder),
    mkdir: async (folder) => (await get()).mkdir(folder),
    test: async () => (await get()).test(),
    // Never opened, or failed to: nothing to close.
    close: async () => (pending ? get().then((c) => c.close(), () => undefined) : undefined),
    markProcessed: async (file) => {
      await (await get()).markProcessed?.(file);
    },
    facts: () => real?.facts?.() ?? {},
  };
  // Only where the type sends records: the export asks whether the connector has the method before it renders a record.
  if (options.sendsRecords) {
    connector.sendRecords = async (records) => {
      const opened = await get();
      if (!opened.sendRecords) throw new ConveyorError("internal", `the ${type} connector declares send but has no sendRecords`);
      return opened.sendRecords(records);
    };
  }
  return connector;
}
