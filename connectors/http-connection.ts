import type { PointerRules } from "../src/pointers/rules.js";
import type { ConnectionConfig } from "./types.js";

/** `poll` of a trigger: its request is repeated until `until` holds on the JSON answer, or the deadline passes. */
export interface HttpPoll {
  /** JSONPath into the answer. With `equals`: its first match must equal it; without: it must find something. */
  until: string;
  equals?: string | number | boolean;
  /** Values of `until` that end the polling at once with an error (a job that failed). */
  fail_on?: (string | number | boolean)[];
  /** Seconds before the first repeat (default 5). */
  interval?: number;
  /** Factor each wait grows by (default 1: a steady interval). */
  backoff?: number;
  /** Seconds after which the trigger fails, quoting the last answer (default 600). */
  deadline?: number;
}

/** One preliminary request of an http connection; its answer yields `{{trigger_valueN}}`. */
export interface HttpTrigger {
  method?: string;
  address: string;
  headers?: Record<string, string>;
  payload?: Record<string, unknown>;
  body?: string;
  jsonpath?: string;
  xpath?: string;
  header?: string;
  regex?: string;
  poll?: HttpPoll;
}

/** An http connection: one URL, how to call it, how to log in, how to follow pages, what to ask first. */
export interface HttpConnection extends ConnectionConfig {
  method?: string;
  headers?: Record<string, string>;
  payload?: Record<string, unknown>;
  login_address?: string;
  oauth?: { address: string; client_id: string; client_secret: string; grant_type?: string; method?: string };
  paginate?: boolean;
  pagination?: { next: string; param?: string; records?: string };
  triggers?: HttpTrigger[];
  /** The pointer lifecycle's rules (src/pointers/); the connector reads a pointer's `initial`. */
  pointers?: PointerRules;
}
