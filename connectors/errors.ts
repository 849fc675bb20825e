import { ConveyorError, type ErrorCode } from "../src/errors.js";

// Turns whatever a protocol library throws into a ConveyorError with one of the
// connector codes. The libraries disagree on how they report things (basic-ftp:
// reply codes; ssh2: `level` and messages; node: errno strings), so the rules
// below look at all three. Auth and host-key failures are never retryable: a
// retry would only lock the account or hide an attack.

export interface ErrorSite {
  /** `ftp`, `sftp`, … as the user named the connection. */
  protocol: string;
  /** `host:port`, shown so the user knows which server answered. */
  server: string;
  /** What we were doing: `connect`, `list /in`, `download a.csv`. */
  action: string;
  /** Network failures while connecting are `connect`, later ones `transfer`. */
  phase: "connect" | "operation";
}

const NETWORK_CONNECT = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "EAI_AGAIN"]);
const NETWORK_DROP = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "ERR_STREAM_PREMATURE_CLOSE", "ERR_SOCKET_CLOSED"]);
const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(GET|VERIFY)_|ERR_OSSL_)/;
const DROP_TEXT = /(ECONNRESET|socket hang up|connection (lost|closed|reset)|closed unexpectedly|FIN packet unexpectedly|not connected|No SFTP connection|end event|close event|premature close|Client is closed|Connection not available|aborted)/i;

function fieldOf(err: unknown, key: string): unknown {
  return err && typeof err === "object" ? (err as Record<string, unknown>)[key] : undefined;
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

const HINTS: Partial<Record<ErrorCode, string>> = {
  connect: "Check connection.address and connection.port, and that the server accepts connections from this worker.",
  auth: "Check connection.username and connection.password (or the key and its passphrase); the attempt was not repeated so the account is not locked.",
  not_found: "Check connection.path and the file name; the listing shows what the server has.",
  tls: "The server's certificate could not be verified or TLS failed. Fix the certificate, or set connection.validate to false for a server you trust.",
  timeout: "The server stopped answering. It may be overloaded; the run can be retried.",
  transfer: "The connection broke during the transfer; the run can be retried.",
  protocol: "The server refused the command; check permissions on the remote folder.",
};

export function connectorError(code: ErrorCode, site: ErrorSite, reason: string, options: { retryable: boolean; cause?: unknown; hint?: string }): ConveyorError {
  return new ConveyorError(code, `${site.protocol} ${site.action} on ${site.server} failed: ${reason}`, {
    retryable: options.retryable,
    cause: options.cause,
    hint: options.hint ?? HINTS[code],
    details: { server: site.server, action: site.action },
  });
}

export function classifyError(err: unknown, site: ErrorSite): ConveyorError {
  if (err instanceof ConveyorError) return err;
  const message = messageOf(err).replace(/\s+/g, " ").trim();
  const code = fieldOf(err, "code");
  const level = fieldOf(err, "level");

  if (typeof code === "string" && TLS_CODES.test(code)) return connectorError("tls", site, message, { retryable: false, cause: err });
  if (/certificate|self[- ]signed|TLS|SSL routines|handshake/i.test(message) && !DROP_TEXT.test(message)) {
    return connectorError("tls", site, message, { retryable: false, cause: err });
  }
  // basic-ftp FTPError: a three-digit reply code (SFTP status codes are below 32).
  if (typeof code === "number" && code >= 100) return fromFtpReply(code, message, site, err);
  if (level === "client-authentication" || /authentication methods failed|Permission denied \(|ERR_BAD_AUTH/i.test(message)) {
    return connectorError("auth", site, "the server refused the credentials", { retryable: false, cause: err });
  }
  if (code === "ENOENT" || code === 2 || /no such file|not found|does not exist|ERR_BAD_PATH/i.test(message)) {
    return connectorError("not_found", site, message, { retryable: false, cause: err });
  }
  if (code === "ETIMEDOUT" || /timed? ?out/i.test(message)) return connectorError("timeout", site, message, { retryable: true, cause: err });
  if (code === "ENOTFOUND") return connectorError("connect", site, `host name not found (${message})`, { retryable: false, cause: err });
  if (typeof code === "string" && NETWORK_CONNECT.has(code)) return connectorError("connect", site, message, { retryable: true, cause: err });
  if ((typeof code === "string" && NETWORK_DROP.has(code)) || DROP_TEXT.test(message) || level === "client-socket") {
    const dropCode = site.phase === "connect" ? "connect" : "transfer";
    return connectorError(dropCode, site, message, { retryable: true, cause: err });
  }
  if (code === "EACCES" || code === 3 || /permission denied/i.test(message)) {
    return connectorError("protocol", site, `permission denied (${message})`, { retryable: false, cause: err });
  }
  return connectorError(site.phase === "connect" ? "connect" : "protocol", site, message, { retryable: false, cause: err });
}

function fromFtpReply(reply: number, message: string, site: ErrorSite, cause: unknown): ConveyorError {
  if (reply === 530 || reply === 331 || reply === 332) {
    return connectorError("auth", site, "the server refused the credentials", { retryable: false, cause });
  }
  // Servers disagree on the reply code for a missing file (550, 551, 450); the text agrees.
  if (reply >= 450 && /no such file|not found|does not exist|ENOENT/i.test(message)) {
    return connectorError("not_found", site, message, { retryable: false, cause });
  }
  if (reply === 550 || reply === 450) {
    // 550 covers both "no such file" and "permission denied"; only the text tells them apart.
    if (/permission|denied|not allowed|EACCES/i.test(message)) {
      return connectorError("protocol", site, `permission denied (${message})`, { retryable: false, cause });
    }
    return connectorError("not_found", site, message, { retryable: false, cause });
  }
  if (reply === 421) return connectorError("connect", site, message, { retryable: true, cause });
  if (reply === 425 || reply === 426) return connectorError("transfer", site, message, { retryable: true, cause });
  if (reply === 534 || reply === 522) return connectorError("tls", site, message, { retryable: false, cause });
  // 4xx is the server's own "try again later".
  if (reply >= 400 && reply < 500) return connectorError("transfer", site, message, { retryable: true, cause });
  return connectorError("protocol", site, message, { retryable: false, cause });
}
