import type { Connector } from "./types.js";

/**
 * A connector whose implementation loads with its first operation: the
 * libraries of the types (ssh2, basic-ftp, imapflow, nodemailer, the AWS SDK)
 * cost more to load than most runs take, and a run or a command needs at most
 * one or two of them. `open` loads the module and builds the real connector;
 * an error it throws is the first operation's error.
 */
export function deferredConnector(type: string, open: () => Promise<Connector>): Connector {
  let real: Connector | undefined;
  let pending: Promise<Connector> | undefined;
  const get = (): Promise<Connector> =>
    (pending ??= open().then((connector) => {
      real = connector;
      return connector;
    }));
  return {
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
}
