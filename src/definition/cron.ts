/**
 * The cron dialect of automations.md: five fields (minute hour day-of-month
 * month day-of-week, 0 = Sunday), each a comma list of `*`, `*\/n`, `a` or
 * `a-b`. Written here rather than left to the scheduler's library so `check`
 * says which field is wrong and what it accepts, and so a definition the
 * service would refuse (names, `?`, `L`, seconds) is refused here too.
 */

interface CronField {
  name: string;
  min: number;
  max: number;
}

const FIELDS: readonly CronField[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  // 7 is Sunday too, as in most crons; the scheduler's library reads it so.
  { name: "day of week", min: 0, max: 7 },
];

export const CRON_ALLOWED =
  "five fields \"minute hour day-of-month month day-of-week\" (0 = Sunday), each a comma list of *, */n, a or a-b; e.g. \"0 6 * * 1-5\"";

function checkItem(item: string, field: CronField): string | null {
  const range = `${field.min}-${field.max}`;
  const num = (text: string): number | null => (/^\d{1,2}$/.test(text) ? Number(text) : null);
  if (item === "*") return null;
  const step = /^\*\/(.+)$/.exec(item);
  if (step) {
    const n = num(step[1] ?? "");
    if (n === null || n < 1 || n > field.max) return `step "${item}" must be */1 to */${field.max}`;
    return null;
  }
  const span = /^([^-]+)-(.+)$/.exec(item);
  if (span) {
    const a = num(span[1] ?? "");
    const b = num(span[2] ?? "");
    if (a === null || b === null) return `"${item}" is not a range of numbers (${range})`;
    if (a < field.min || b > field.max) return `range "${item}" is outside ${range}`;
    if (a > b) return `range "${item}" runs backwards`;
    return null;
  }
  const n = num(item);
  if (n === null) return `"${item}" is not allowed (use numbers ${range}, *, */n or a-b)`;
  if (n < field.min || n > field.max) return `${n} is outside ${range}`;
  return null;
}

/** Null when valid; otherwise what is wrong, naming the field. */
export function checkCron(expression: string): string | null {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5 || parts[0] === "") return `a cron line has 5 fields, "${expression}" has ${parts[0] === "" ? 0 : parts.length}`;
  for (let i = 0; i < FIELDS.length; i++) {
    const field = FIELDS[i];
    const text = parts[i];
    if (!field || text === undefined) continue;
    for (const item of text.split(",")) {
      const wrong = checkItem(item, field);
      if (wrong) return `${field.name} field: ${wrong}`;
    }
  }
  return neverFires(parts);
}

/** The values a valid field's text allows. */
function expand(text: string, field: CronField): Set<number> {
  const out = new Set<number>();
  for (const item of text.split(",")) {
    const step = /^\*\/(\d+)$/.exec(item);
    const span = /^(\d+)-(\d+)$/.exec(item);
    const [from, to, by] = item === "*" ? [field.min, field.max, 1] : step ? [field.min, field.max, Number(step[1])] : span ? [Number(span[1]), Number(span[2]), 1] : [Number(item), Number(item), 1];
    for (let v = from; v <= to; v += by) out.add(v);
  }
  return out;
}

/** Longest month lengths, February in a leap year. */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * A day of the month that none of the months has ("0 0 30 2 *") is a schedule
 * that is accepted and never runs. With a day of the week as well, either
 * matching fires the run (the cron rule), so only a "*" day of week is checked.
 */
function neverFires(parts: readonly string[]): string | null {
  const [, , domText = "*", monthText = "*", dowText = "*"] = parts;
  if (dowText !== "*" || domText === "*") return null;
  const [, , domField, monthField] = FIELDS;
  if (!domField || !monthField) return null;
  const days = Math.min(...expand(domText, domField));
  const months = [...expand(monthText, monthField)];
  if (months.some((m) => days <= (MONTH_DAYS[m - 1] ?? 31))) return null;
  return `day of month ${domText} never occurs in month ${monthText}: the schedule would never run`;
}
