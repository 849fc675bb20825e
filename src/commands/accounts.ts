import type { Command } from "commander";
import { lazyAction } from "./lazy-action.js";

/**
 * `conveyor accounts add|list|remove`: the daemon's accounts (service.md). A
 * running daemon sees a change at the next request; tokens are kept encrypted
 * with the worker's secret key.
 */
export function register(program: Command): void {
  const accounts = program.command("accounts").description("manage the daemon's accounts: an API user and token each, the token kept encrypted");

  accounts
    .command("add")
    .description("add an account (or give an existing one a new token); prints the token once when it is generated")
    .argument("<user>", "API user: the name requests send in X-Auth-User, and the account's service user")
    .option("--token <token>", "the account's API token (the service's token for a remote service); generated when absent")
    .option("--json", "print {user, token} as JSON")
    .action(lazyAction(async () => (await import("./accounts-action.js")).addAccount));

  accounts
    .command("list")
    .description("list the accounts (never their tokens)")
    .option("--json", "print a JSON array")
    .action(lazyAction(async () => (await import("./accounts-action.js")).listAccounts));

  accounts
    .command("remove")
    .description("remove an account; its automations stay stored but cannot be reached or run until it is added again")
    .argument("<user>", "API user")
    .action(lazyAction(async () => (await import("./accounts-action.js")).removeAccount));
}
