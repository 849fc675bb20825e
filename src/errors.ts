import { maskSecrets } from "./secrets.js";

/**
 * Stable error codes. Scripts, run records and the API expose them, so a code
 * is never renamed; add new ones instead.
 */
export const ERROR_CODES = [
  // usage and definitions
  "usage",
  "settings_invalid",
  "definition_invalid",
  "definition_not_found",
  "parameter_missing",
  "placeholder_unknown",
  "secret_key",
  "search_syntax",
  // connectors
  "connect",
  "auth",
  "not_found",
  "host_key",
  "tls",
  "timeout",
  "transfer",
  "protocol",
  "private_host",
  "unsafe_path",
  // service
  "service_http",
  "service_rejected",
  "rate_limited",
  "service_unavailable",
  "bulk_failed",
  // reading and mapping
  "file_missing",
  "file_format",
  "header_mismatch",
  "row_invalid",
  "template",
  "action_failed",
  // runs
  "guard",
  "canceled",
  "interrupted",
  "records_failed",
  "automation_busy",
  "notify_failed",
  "state",
  "internal",
  // requests: a change that collides with the state it meets (a slug just taken, a published automation gone)
  "conflict",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ConveyorErrorOptions {
  /** Worth trying again: a network blip, a 5xx, a 429. Never set for bad input. */
  retryable?: boolean;
  cause?: unknown;
  /** Extra structured facts (field path, line, status). Must hold no secret. */
  details?: Record<string, unknown>;
  /** How the user fixes it, shown after the message. */
  hint?: string;
}

/** The one error type of Conveyor: a stable code, a retryable flag, and the cause. */
export class ConveyorError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: ConveyorErrorOptions = {}) {
    super(maskSecrets(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ConveyorError";
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details ?? {};
    this.hint = options.hint === undefined ? undefined : maskSecrets(options.hint);
  }

  /** Message plus the hint, as a person should read it. */
  describe(): string {
    return this.hint ? `${this.message}\n  ${this.hint}` : this.message;
  }

  toJSON(): { code: ErrorCode; message: string; retryable: boolean; hint?: string; details?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.hint ? { hint: this.hint } : {}),
      ...(Object.keys(this.details).length ? { details: this.details } : {}),
    };
  }
}

export function isConveyorError(err: unknown): err is ConveyorError {
  return err instanceof ConveyorError;
}

/** Wrap anything thrown into a ConveyorError, keeping the original as the cause. */
export function toConveyorError(err: unknown, fallback: ErrorCode = "internal"): ConveyorError {
  if (err instanceof ConveyorError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ConveyorError(fallback, message, { cause: err });
}
