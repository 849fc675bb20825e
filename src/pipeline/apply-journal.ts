/** The change a bulk file (order body) makes, as the run record counts what the service confirmed. */
export type AppliedKind = "created" | "updated" | "removed";

/**
 * Where the apply stages say what reached the service, file by file: the run
 * record keeps it as it happens, so a process killed mid-apply leaves a
 * record that tells what the service holds. One write per step of a file
 * (never per row); the fault points of the crash tests sit at these steps,
 * so every pass crashes at the same places.
 */
export interface ApplyJournal {
  /** A pass starts applying `files` files (bodies): the record gets the plan's counts before anything goes. */
  planned(files: number): Promise<void>;
  /** Before the file goes: from here on the service may hold any of its rows. */
  sending(name: string, rows: number): Promise<void>;
  /** The service took the upload as job `job` (null: an order body, whose answer is about to be read). */
  accepted(name: string, job: string | null): Promise<void>;
  /** The file's result was read: its rows as the service confirmed them. */
  confirmed(name: string, kind: AppliedKind, succeeded: number, failed: number): Promise<void>;
  /** The file is known not to have reached the service (refused, or the job list shows no such job). */
  notSent(name: string): Promise<void>;
}

export const NO_JOURNAL: ApplyJournal = {
  planned: async () => undefined,
  sending: async () => undefined,
  accepted: async () => undefined,
  confirmed: async () => undefined,
  notSent: async () => undefined,
};

/** A bulk file's action (add/start, edit/relist, end/delete). */
export function productKind(action: string): AppliedKind {
  if (action === "add" || action === "start") return "created";
  return action === "end" || action === "delete" ? "removed" : "updated";
}

export function orderKind(action: "create" | "update" | "archive"): AppliedKind {
  return action === "create" ? "created" : action === "update" ? "updated" : "removed";
}

/**
 * Records whose change did not stand, and why. A Map serves a few; a product
 * run keeps them in its work database, because a service that refuses a
 * whole feed fails every one of its million rows.
 */
export interface FailedRecords {
  set(identifier: string, message: string): unknown;
  has(identifier: string): boolean;
  readonly size: number;
  /** Each failed record and its message, in the order they failed: errors.csv and the run record's failures. */
  entries(): Iterable<[string, string]>;
}
