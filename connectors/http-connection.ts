import type { ConnectionConfig } from "./types.js";

/** An http connection: one URL, how to call it, how to log in, how to follow pages. */
export interface HttpConnection extends ConnectionConfig {
  method?: string;
  headers?: Record<string, string>;
  payload?: Record<string, unknown>;
  login_address?: string;
  oauth?: { address: string; client_id: string; client_secret: string; grant_type?: string; method?: string };
  paginate?: boolean;
  pagination?: { next: string; param?: string; records?: string };
}
