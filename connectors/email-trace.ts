import type { Logger as ImapLogger } from "imapflow";
import { registerSecret } from "../src/secrets.js";
import { redactTrace } from "./trace.js";
import type { ConnectorContext } from "./types.js";

/** SASL PLAIN carries `\0user\0password` in base64: that text is a secret too. */
export function registerSaslForms(user: string | undefined, pass: string | undefined): void {
  if (!pass) return;
  registerSecret(Buffer.from(`\u0000${user ?? ""}\u0000${pass}`).toString("base64"));
  registerSecret(Buffer.from(`${user ?? ""}\u0000${user ?? ""}\u0000${pass}`).toString("base64"));
}

const SASL_ARGUMENT = /(AUTHENTICATE\s+\S+\s+)\S+/gi;

function line(entry: unknown): string {
  if (entry && typeof entry === "object") {
    const e = entry as { src?: string; msg?: unknown; comment?: unknown };
    const dir = e.src === "c" ? "C:" : e.src === "s" ? "S:" : "";
    return [dir, typeof e.msg === "string" ? e.msg : JSON.stringify(e.msg ?? ""), e.comment ? `(${String(e.comment)})` : ""].filter(Boolean).join(" ");
  }
  return String(entry);
}

/** imapflow's logger for `--verbose`: protocol lines at debug, credentials redacted; silent otherwise. */
export function imapLogger(ctx: ConnectorContext): ImapLogger | false {
  if (!ctx.verbose) return false;
  const write = (entry: unknown): void => ctx.logger.debug({ protocol: "imap" }, redactTrace(line(entry).replace(SASL_ARGUMENT, "$1********")));
  return { debug: write, info: write, warn: write, error: write, trace: write };
}
