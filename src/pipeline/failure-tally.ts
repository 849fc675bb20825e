/**
 * The records a live run's apply stage failed, counted by the reason the
 * service gave, for the run record, the summary and the notification.
 * errors.csv has every record; this keeps only a few identifiers per
 * reason and a bounded number of reasons, because a service that refuses
 * a whole feed fails every one of its million rows.
 *
 * @module
 */

import { ConveyorError } from "../errors.js";
import { count } from "../plural.js";
import { maskSecrets } from "../secrets.js";
import type { RunFailure } from "../state/index.js";

const EXAMPLES = 3;
const REASONS = 20;
export const OTHER_REASONS = "other messages (errors.csv has each record's own)";

/**
 * The reason a message gives, without the record it names, so that records
 * refused for one reason group together: `cannot add guid "SKU-1": the title
 * field is required to create an item` is `the title field is required to
 * create an item`; a message that names the record elsewhere keeps its words
 * with the identifier left out.
 */
export function reasonOf(identifier: string, message: string): string {
  const text = message.trim();
  const at = tokenAt(text, identifier);
  if (at < 0) return text;
  const colon = text.indexOf(": ", at + identifier.length);
  const rest = colon < 0 ? "" : text.slice(colon + 2).trim();
  return rest === "" ? `${text.slice(0, at)}…${text.slice(at + identifier.length)}` : rest;
}

const WORD = /[\p{L}\p{N}_-]/u;

/** Where the identifier stands as a word of its own: identifier 1 is not the 1 of "bulk-1.csv". */
function tokenAt(text: string, identifier: string): number {
  if (identifier === "") return -1;
  for (let at = text.indexOf(identifier); at >= 0; at = text.indexOf(identifier, at + 1)) {
    if (!WORD.test(text.charAt(at - 1)) && !WORD.test(text.charAt(at + identifier.length))) return at;
  }
  return -1;
}

export class FailureTally {
  private readonly reasons = new Map<string, RunFailure>();

  /**
   * Reasons that differ only in their figures are one ("does not mention row
   * 5", "… row 6"): each row of a result file cut short would otherwise be a
   * reason of its own. The first one met is the one quoted.
   */
  add(identifier: string, message: string): void {
    const reason = reasonOf(identifier, maskSecrets(message)) || "no message";
    let key = reason.replace(/\d+/g, "#");
    if (!this.reasons.has(key) && this.reasons.size >= REASONS) key = OTHER_REASONS;
    let entry = this.reasons.get(key);
    if (!entry) {
      entry = { message: key === OTHER_REASONS ? OTHER_REASONS : reason, count: 0, examples: [] };
      this.reasons.set(key, entry);
    }
    entry.count++;
    if (entry.examples.length < EXAMPLES) entry.examples.push(maskSecrets(identifier));
  }

  /** Most frequent first (the catch-all last); ties keep the order they were met in. */
  list(): RunFailure[] {
    const all = [...this.reasons.values()].map((f) => ({ ...f, examples: [...f.examples] }));
    const rank = (f: RunFailure): number => (f.message === OTHER_REASONS ? -1 : f.count);
    return all.sort((a, b) => rank(b) - rank(a));
  }
}

/** `the title field is required to create an item (2: SKU-1, SKU-2)`, and `… and 5 more` past the examples. */
export function failureLine(failure: RunFailure): string {
  const more = failure.count - failure.examples.length;
  return `${failure.message} (${failure.count}: ${failure.examples.join(", ")}${more > 0 ? ` and ${more} more` : ""})`;
}

/**
 * The failures in a few lines: how many records, then each reason with its
 * count and first identifiers. None when there are none, or when the run's
 * error already quotes the only reason (a run that failed only because its
 * records did): a reader should not read it twice.
 */
export function failureLines(failures: readonly RunFailure[], error?: { message: string } | null): string[] {
  const [first, ...others] = failures;
  if (first === undefined || (others.length === 0 && error?.message.includes(failureLine(first)))) return [];
  const total = failures.reduce((n, f) => n + f.count, 0);
  return [`${count(total, "record")} failed, by the service's message:`, ...failures.map((f) => `  ${failureLine(f)}`)];
}

/**
 * The error of a run that went to its end and ended `failed` only because
 * its records failed (`records_failed`: nothing stopped it, unlike an error
 * that cut the apply short): the run record must say why and what to do,
 * not leave `error` empty. Null when nothing failed.
 */
export function failedRecordsError(runId: string, failures: readonly RunFailure[], rowErrors: { count: number; first: string | null }): ConveyorError | null {
  const where = `errors.csv lists each one with its message: conveyor debug-files ${runId} errors.csv`;
  const [first, ...others] = failures;
  if (first) {
    const total = failures.reduce((n, f) => n + f.count, 0);
    const rest = others.length ? `; and ${count(others.length, "other message")}` : "";
    return new ConveyorError("records_failed", `${count(total, "record")} refused by the service: ${failureLine(first)}${rest}`, {
      details: { failed: total },
      hint: `Fix these records in the source file (${where}) and run again: a failed record keeps its old snapshot, so the next run sends it again.`,
    });
  }
  if (rowErrors.count > 0) {
    return new ConveyorError("records_failed", `${count(rowErrors.count, "row")} had errors and no record was applied${rowErrors.first ? `; the first: ${rowErrors.first}` : ""}`, {
      details: { row_errors: rowErrors.count },
      hint: `Fix the rows in the source file (${where}) and run again.`,
    });
  }
  return null;
}
