import type { Command } from "commander";
import { AccountStore } from "../daemon/accounts.js";
import { openDaemonDb } from "../daemon/daemon-db.js";
import { loadSecretKey } from "../definition/index.js";
import { ConveyorError } from "../errors.js";
import type { Settings } from "../config.js";
import { openStore } from "../state/index.js";
import { EXIT, runCommand } from "./context.js";
import { settingsFrom } from "./settings-from.js";

async function withAccounts<T>(settings: Settings, body: (accounts: AccountStore) => Promise<T>): Promise<T> {
  const store = await openStore(settings);
  const db = openDaemonDb(settings, store);
  try {
    return await body(new AccountStore(db.accounts, loadSecretKey(settings)));
  } finally {
    await db.close();
    await store.close();
  }
}

/** What `conveyor accounts add` does; accounts.ts declares its arguments and options. */
export async function addAccount(user: string, flags: { token?: string; json?: boolean }, command: Command): Promise<void> {
  await runCommand(Boolean(flags.json), async () => {
    const settings = settingsFrom(command);
    const token = await withAccounts(settings, (store) => store.add(user, flags.token, "cli"));
    if (flags.json) process.stdout.write(`${JSON.stringify({ user, ...(flags.token ? {} : { token }) })}\n`);
    else if (flags.token) process.stdout.write(`account ${user} saved\n`);
    // Shown once, on purpose: it is kept only encrypted and cannot be read back.
    else process.stdout.write(`account ${user} saved; its API token (shown only now):\n${token}\n`);
    return EXIT.ok;
  });
}

/** What `conveyor accounts list` does; accounts.ts declares its arguments and options. */
export async function listAccounts(flags: { json?: boolean }, command: Command): Promise<void> {
  await runCommand(Boolean(flags.json), async () => {
    const list = await withAccounts(settingsFrom(command), (store) => store.list());
    if (flags.json) process.stdout.write(`${JSON.stringify(list.map((a) => ({ user: a.apiUser, created: a.created, origin: a.origin })))}\n`);
    else if (list.length === 0) process.stdout.write("no accounts yet: `conveyor accounts add <user>`, or start the daemon with the embedded service\n");
    else for (const a of list) process.stdout.write(`${a.apiUser}\t${a.origin}\t${a.created}\n`);
    return EXIT.ok;
  });
}

/** What `conveyor accounts remove` does; accounts.ts declares its arguments and options. */
export async function removeAccount(user: string, _flags: unknown, command: Command): Promise<void> {
  await runCommand(false, async () => {
    const removed = await withAccounts(settingsFrom(command), (store) => store.remove(user));
    if (!removed) throw new ConveyorError("usage", `no account "${user}"`, { hint: "`conveyor accounts list` shows the accounts" });
    process.stdout.write(`account ${user} removed\n`);
    return EXIT.ok;
  });
}
