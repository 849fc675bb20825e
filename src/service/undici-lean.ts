/**
 * undici's Agent and `request`, loaded from their own modules instead of the
 * package's index. The index also builds fetch, WebSocket, EventSource, the
 * cookie and cache stores, the proxy and mock agents: 110 modules whose
 * loading was the largest single cost of a short run's start-up, against
 * 25 for the two the service transport uses. Same classes, same code: the
 * index's `request` is this module's `request`, the dispatcher given. The
 * paths are undici's own layout (pinned by the lock file); a moved file fails
 * every service test at once, not quietly.
 *
 * @module
 */

import { createRequire } from "node:module";
import type { Agent as UndiciAgent, Dispatcher, FormData as UndiciFormData } from "undici";
import { lazyRequire } from "../lazy-require.js";

const require = createRequire(import.meta.url);

export const Agent = require("undici/lib/dispatcher/agent.js") as typeof UndiciAgent;
export type Agent = UndiciAgent;

type RequestOptions = Omit<Dispatcher.RequestOptions, "origin" | "path" | "method"> & { method: Dispatcher.HttpMethod; dispatcher: Dispatcher };

const apiRequest = require("undici/lib/api/api-request.js") as (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
const { parseURL } = require("undici/lib/core/util.js") as { parseURL: (url: string) => URL };

/** undici's `request(url, options)` for an absolute URL and a dispatcher of our own (its index wraps the same function so). */
export function request(url: string, options: RequestOptions): Promise<Dispatcher.ResponseData> {
  const parsed = parseURL(url);
  const { dispatcher, ...rest } = options;
  return apiRequest.call(dispatcher, { ...rest, origin: parsed.origin, path: parsed.search ? `${parsed.pathname}${parsed.search}` : parsed.pathname });
}

/** undici's FormData, with the whole package, when a bulk file is first uploaded: a debug run never does. */
const undici = lazyRequire<{ FormData: typeof UndiciFormData }>("undici");

export function newFormData(): UndiciFormData {
  return new (undici().FormData)();
}
