import type { Effective } from "../daemon/definitions.js";
import type { AutomationKind, StoredAutomation } from "../daemon/definitions-store.js";
import type { RunRecord } from "../state/index.js";
import type { ConsoleContext } from "./context.js";

export type AutomationState = "active" | "inactive" | "draft" | "invalid";

/** One automation as the console's tables show it. */
export interface AutomationRow {
  kind: AutomationKind;
  id: number;
  name: string;
  state: AutomationState;
  schedule: string;
  timezone: string;
  /** `automation.events`: undefined when it listens to none. */
  events: string[] | undefined;
  lastRun: RunRecord | null;
  next: Date | null;
  /** Why it no longer validates (state `invalid`). */
  problem?: string;
  effective?: Effective;
}

const KINDS: readonly AutomationKind[] = ["custom", "installed"];

export function stateOf(e: Effective): AutomationState {
  if (e.automation.draft) return "draft";
  return e.automation.active ? "active" : "inactive";
}

/** The row of one stored automation; one that no longer validates is shown as `invalid` with the reason rather than left out. */
export async function automationRow(ctx: ConsoleContext, stored: StoredAutomation): Promise<AutomationRow> {
  const key = String(stored.id);
  const [lastRun] = await ctx.store.listRuns({ automation: key, account: stored.account, limit: 1 });
  const base = { kind: stored.kind, id: stored.id, lastRun: lastRun ?? null, next: ctx.nextFire(key) };
  try {
    const e = ctx.definitions.effective(stored);
    const a = e.automation;
    return { ...base, name: a.name, state: stateOf(e), schedule: a.schedule ?? "", timezone: a.timezone || "UTC", events: a.events, effective: e };
  } catch (err) {
    const name = typeof stored.body.name === "string" ? stored.body.name : stored.slug;
    return { ...base, name, state: "invalid", schedule: "", timezone: "UTC", events: undefined, problem: (err as Error).message };
  }
}

/** Every custom and installed automation of the account, custom first, each by name. */
export async function accountAutomations(ctx: ConsoleContext, account: string): Promise<AutomationRow[]> {
  const rows: AutomationRow[] = [];
  for (const kind of KINDS) {
    for (const stored of await ctx.definitions.list(account, kind)) rows.push(await automationRow(ctx, stored));
  }
  return rows.sort((a, b) => (a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind === "custom" ? -1 : 1));
}
