import { createHash } from "node:crypto";
import type { Automation } from "../definition/index.js";
import type { SchedulableAutomation } from "./types.js";

/**
 * A fingerprint of the whole definition, so any edit (not only to the schedule)
 * counts as a change: the scheduler then reschedules the automation at once.
 * Key order is normalised, so re-reading the same file gives the same version.
 */
export function definitionVersion(definition: unknown): string {
  return createHash("sha256").update(stableJson(definition)).digest("hex").slice(0, 16);
}

/** What the scheduler needs from a validated definition; `key` is the daemon's name for the automation. */
export function toSchedulable(
  key: string,
  account: string,
  automation: Pick<Automation, "active" | "draft" | "schedule" | "timezone">,
  version: string = definitionVersion(automation),
): SchedulableAutomation {
  return {
    key,
    account,
    schedule: automation.schedule,
    timezone: automation.timezone || "UTC",
    active: automation.active,
    draft: automation.draft,
    version,
  };
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
