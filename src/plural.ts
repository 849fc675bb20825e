/**
 * Counts as a reader says them: "1 write", "2 writes", "0 rows". Every count
 * the CLI summary, the progress line and the notifications print goes
 * through here, so a lone record never reads "1 records".
 */

/** The noun alone, agreeing with n: `noun(1, "row")` is "row", `noun(3, "row")` is "rows". */
export function noun(n: number, singular: string, plural = `${singular}s`): string {
  return n === 1 ? singular : plural;
}

/** n and its noun: `count(1, "write")` is "1 write", `count(2, "write")` is "2 writes". */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${noun(n, singular, plural)}`;
}

/** As `count`, with n grouped by thousands (en-US) for large figures: "1,200 rows". */
export function countLarge(n: number, singular: string, plural = `${singular}s`): string {
  return `${n.toLocaleString("en-US")} ${noun(n, singular, plural)}`;
}
