import { maskSecrets, MASK } from "../src/secrets.js";
import type { Logger } from "../src/log.js";

// Protocol traces for `--verbose`. Credentials travel in the clear inside
// commands (`PASS`, IMAP `LOGIN`, SMTP `AUTH PLAIN <base64>`), so the argument of
// those commands is replaced before a line reaches the logger, whatever the
// secret registry knows.

const CREDENTIAL_COMMAND = /^([<>\s]*(?:\S+\s+)?)(PASS|LOGIN|AUTH|ACCT)(\s+)(.+)$/gim;

export function redactTrace(line: string): string {
  return maskSecrets(line.replace(CREDENTIAL_COMMAND, (_m, lead: string, cmd: string, space: string) => `${lead}${cmd}${space}${MASK}`));
}

/** A trace sink writing redacted lines at debug level, or nothing when not verbose. */
export function traceSink(logger: Logger, verbose: boolean | undefined, protocol: string): ((line: string) => void) | undefined {
  if (!verbose) return undefined;
  return (line: string) => logger.debug({ protocol }, redactTrace(line));
}
