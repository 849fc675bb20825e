/**
 * What the scheduler's state stores (SQLite and PostgreSQL) share: the record
 * of a skipped fire time, the two times kept per automation, and the step back
 * that reopens a fire time.
 */

export interface SkipRecord {
  fireTime: string;
  reason: string;
  recorded: string;
}

/** The two times kept per automation: its last fire time and its last full run. */
export type TimeColumn = "last_fire" | "last_full";

/** One millisecond before a fire time: catch-up runs a fire time later than the last one dealt with. */
export function justBefore(iso: string): string {
  return new Date(Date.parse(iso) - 1).toISOString();
}
