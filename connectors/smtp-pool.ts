import nodemailer, { type Transporter } from "nodemailer";
import type SMTPPool from "nodemailer/lib/smtp-pool/index.js";
import { ConveyorError } from "../src/errors.js";
import { registerSecret } from "../src/secrets.js";
import type { Logger } from "../src/log.js";
import { registerSaslForms } from "./email-trace.js";
import { redactTrace } from "./trace.js";

// One pooled nodemailer transport per SMTP URL for the whole process
// (pitfalls.md, Mail): e-mail exports and notifications share it instead of
// opening a connection per message. `smtps://` or port 465 is implicit TLS;
// `smtp://` upgrades with STARTTLS when the server offers it.

const pools = new Map<string, Transporter<SMTPPool.SentMessageInfo>>();

export function smtpUrlRequired(url: string | undefined): string {
  if (!url)
    throw new ConveyorError("settings_invalid", "sending e-mail needs an SMTP server, and none is set", {
      hint: "set CONVEYOR_SMTP_URL (--smtp-url), e.g. smtp://user:password@mail.example.com:587",
    });
  return url;
}

/** The sender: `?from=` on the SMTP URL, else the SMTP user when it is an address. */
export function senderOf(url: string): string {
  try {
    const parsed = new URL(url);
    const from = parsed.searchParams.get("from");
    if (from) return from;
    const user = decodeURIComponent(parsed.username);
    if (user.includes("@")) return user;
    return `conveyor@${parsed.hostname || "localhost"}`;
  } catch {
    return "conveyor@localhost";
  }
}

function traceLogger(logger: Logger): Record<"trace" | "debug" | "info" | "warn" | "error" | "fatal", (...args: unknown[]) => void> {
  const write = (...args: unknown[]): void => {
    // nodemailer calls (meta, format, ...values) like bunyan.
    const text = args.filter((a) => typeof a === "string" || typeof a === "number").map(String).join(" ");
    logger.debug({ protocol: "smtp" }, redactTrace(text));
  };
  return { trace: write, debug: write, info: write, warn: write, error: write, fatal: write };
}

export function smtpTransport(url: string, logger?: Logger, verbose = false): Transporter<SMTPPool.SentMessageInfo> {
  const existing = pools.get(url);
  if (existing) return existing;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConveyorError("settings_invalid", "CONVEYOR_SMTP_URL is not a valid URL", { hint: "smtp://user:password@host:587 or smtps://…:465" });
  }
  if (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:")
    throw new ConveyorError("settings_invalid", `CONVEYOR_SMTP_URL must start with smtp:// or smtps://, not ${parsed.protocol}//`);
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  registerSecret(pass);
  registerSaslForms(user, pass);
  const port = Number(parsed.port || (parsed.protocol === "smtps:" ? 465 : 587));
  const options: SMTPPool.Options = {
    pool: true,
    host: parsed.hostname,
    port,
    // `secure` must match the port: 465 is implicit TLS, 587/25 use STARTTLS.
    secure: parsed.protocol === "smtps:" || port === 465,
    ...(user ? { auth: { user, pass } } : {}),
    maxConnections: 2,
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 60_000,
    tls: { rejectUnauthorized: parsed.searchParams.get("validate") !== "false" },
    ...(verbose && logger ? { logger: traceLogger(logger), debug: true } : { logger: false }),
  };
  const transport = nodemailer.createTransport(options);
  pools.set(url, transport);
  return transport;
}

/** Closes every pooled transport (daemon shutdown, tests). */
export function closeSmtpPools(): void {
  for (const t of pools.values()) t.close();
  pools.clear();
}
