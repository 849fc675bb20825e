import type { FastifyRequest } from "fastify";
import { badRequest, fields } from "../../http/envelopes.js";

/** The run flags of the seed (part 4.2) plus `force`: each is on or off, nothing else. */
export const RUN_FLAGS = ["debug", "diff", "force", "notify"] as const;
export type RunFlag = (typeof RUN_FLAGS)[number];

/** The documented values; `True`/`FALSE` pass too, since some HTTP clients capitalise booleans. */
const ON = new Set(["1", "true"]);
const OFF = new Set(["0", "false"]);
export const FLAG_VALUES = "1, 0, true or false";

/**
 * Reads one run flag strictly: absent is off, and any value but the documented
 * ones is a 400 naming the parameter. A lax reading once turned `debug=maybe`
 * into a live run, so a misspelled dry run must fail before anything is queued.
 */
export function runFlag(request: FastifyRequest, name: RunFlag): boolean {
  const raw = fields(request.query)[name];
  if (raw === undefined) return false;
  if (Array.isArray(raw)) {
    throw badRequest(`${name} is given ${raw.length} times; give it once, as ${FLAG_VALUES} (leave it out for off)`);
  }
  const value = typeof raw === "string" ? raw : String(raw);
  const lower = value.toLowerCase();
  if (ON.has(lower)) return true;
  if (OFF.has(lower)) return false;
  const shown = value === "" ? "an empty value" : JSON.stringify(value);
  throw badRequest(`${name} must be ${FLAG_VALUES}, not ${shown}; leave it out for off${name === "debug" ? " (a live run)" : ""}`);
}

/** Checks every run flag a request carries, so routes that only accept them (the listings) refuse bad values too. */
export function checkRunFlags(request: FastifyRequest): Record<RunFlag, boolean> {
  return { debug: runFlag(request, "debug"), diff: runFlag(request, "diff"), force: runFlag(request, "force"), notify: runFlag(request, "notify") };
}

/** The longest `wait` a run request may ask for: longer holds belong to polling GET /v3/automations/runs/{id}. */
export const WAIT_MAX_SECONDS = 600;

/** `wait=<seconds>`: null when absent, else a whole number of seconds from 1 to WAIT_MAX_SECONDS. */
export function waitSeconds(request: FastifyRequest): number | null {
  const raw = fields(request.query).wait;
  if (raw === undefined) return null;
  const value = Array.isArray(raw) ? null : String(raw);
  if (value === null || !/^\d+$/.test(value) || Number(value) < 1 || Number(value) > WAIT_MAX_SECONDS) {
    const shown = value === null ? "a repeated parameter" : value === "" ? "an empty value" : JSON.stringify(value);
    throw badRequest(`wait must be a whole number of seconds from 1 to ${WAIT_MAX_SECONDS}, not ${shown}; leave it out to be answered once the run is queued`);
  }
  return Number(value);
}
