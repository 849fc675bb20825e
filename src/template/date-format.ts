/**
 * Twig's `date` filter in the automation's time zone: PHP `date()` format
 * characters over the wall-clock parts Intl gives for that zone, so the
 * process's own TZ never leaks into a partner's file.
 *
 * @module
 */

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number;
  /** Minutes east of UTC. */
  offset: number;
  zoneName: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric", weekday: "short", timeZoneName: "short" });
    formatters.set(zone, f);
  }
  return f;
}

function wallClock(date: Date, zone: string): WallClock {
  const parts: Record<string, string> = {};
  for (const p of formatter(zone).formatToParts(date)) parts[p.type] = p.value;
  const n = (k: string): number => Number(parts[k] ?? 0);
  const asUtc = Date.UTC(n("year"), n("month") - 1, n("day"), n("hour"), n("minute"), n("second"));
  const offset = Math.round((asUtc - Math.floor(date.getTime() / 1000) * 1000) / 60000);
  const weekday = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].indexOf(parts.weekday ?? "Sun");
  return { year: n("year"), month: n("month"), day: n("day"), hour: n("hour"), minute: n("minute"), second: n("second"), weekday, offset, zoneName: parts.timeZoneName ?? zone };
}

const pad = (v: number, width = 2): string => String(v).padStart(width, "0");

function offsetText(minutes: number, colon: boolean): string {
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}${colon ? ":" : ""}${pad(abs % 60)}`;
}

function isoWeek(w: WallClock): number {
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day));
  const day = (w.weekday + 6) % 7;
  d.setUTCDate(d.getUTCDate() - day + 3);
  const firstThursday = new Date(Date.UTC(d.getUTCFullYear(), 0, 4));
  return 1 + Math.round((d.getTime() - firstThursday.getTime()) / 86400000 / 7 - ((firstThursday.getUTCDay() + 6) % 7) / 7 + 3 / 7);
}

function character(c: string, w: WallClock, date: Date, zone: string): string {
  const h12 = w.hour % 12 === 0 ? 12 : w.hour % 12;
  const leap = (w.year % 4 === 0 && w.year % 100 !== 0) || w.year % 400 === 0;
  switch (c) {
    case "d": return pad(w.day);
    case "D": return (DAYS[w.weekday] ?? "").slice(0, 3);
    case "j": return String(w.day);
    case "l": return DAYS[w.weekday] ?? "";
    case "N": return String(w.weekday === 0 ? 7 : w.weekday);
    case "w": return String(w.weekday);
    case "z": return String(Math.round((Date.UTC(w.year, w.month - 1, w.day) - Date.UTC(w.year, 0, 1)) / 86400000));
    case "W": return pad(isoWeek(w));
    case "F": return MONTHS[w.month - 1] ?? "";
    case "M": return (MONTHS[w.month - 1] ?? "").slice(0, 3);
    case "m": return pad(w.month);
    case "n": return String(w.month);
    case "t": return String(new Date(Date.UTC(w.year, w.month, 0)).getUTCDate());
    case "L": return leap ? "1" : "0";
    case "Y": return String(w.year);
    case "y": return pad(w.year % 100);
    case "a": return w.hour < 12 ? "am" : "pm";
    case "A": return w.hour < 12 ? "AM" : "PM";
    case "g": return String(h12);
    case "G": return String(w.hour);
    case "h": return pad(h12);
    case "H": return pad(w.hour);
    case "i": return pad(w.minute);
    case "s": return pad(w.second);
    case "v": return pad(date.getTime() % 1000, 3);
    case "u": return pad((date.getTime() % 1000) * 1000, 6);
    case "e": return zone;
    case "T": return w.zoneName;
    case "P": return offsetText(w.offset, true);
    case "p": return w.offset === 0 ? "Z" : offsetText(w.offset, true);
    case "O": return offsetText(w.offset, false);
    case "Z": return String(w.offset * 60);
    case "c": return `${w.year}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${offsetText(w.offset, true)}`;
    case "r": return `${(DAYS[w.weekday] ?? "").slice(0, 3)}, ${pad(w.day)} ${(MONTHS[w.month - 1] ?? "").slice(0, 3)} ${w.year} ${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)} ${offsetText(w.offset, false)}`;
    case "U": return String(Math.floor(date.getTime() / 1000));
    default: return c;
  }
}

/** PHP `date()` formatting of `date` as seen in `zone`; `\x` writes x literally. */
export function formatDate(date: Date, format: string, zone: string): string {
  const w = wallClock(date, zone);
  let out = "";
  for (let i = 0; i < format.length; i++) {
    const c = format[i] ?? "";
    if (c === "\\") {
      out += format[++i] ?? "";
      continue;
    }
    out += character(c, w, date, zone);
  }
  return out;
}

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/**
 * The instant a template's value names: a Date, Unix seconds, `now`, an ISO
 * text with an offset, or a wall-clock `YYYY-MM-DD[ HH:MM[:SS]]` read in `zone`.
 * Null when the value is none of these.
 */
export function toInstant(value: unknown, zone: string, now: Date): Date | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value;
  if (value === null || value === undefined || value === "" || value === "now") return now;
  if (typeof value === "number") return new Date(value * 1000);
  const text = String(value).trim();
  if (/^-?\d+$/.test(text)) return new Date(Number(text) * 1000);
  const local = LOCAL.exec(text);
  if (local) {
    const [y, mo, d, h, mi, s] = local.slice(1).map((v) => Number(v ?? 0)) as [number, number, number, number, number, number];
    const guess = Date.UTC(y, mo - 1, d, h, mi, s);
    // Two passes settle the zone's offset, also next to a DST change.
    let instant = guess - wallClock(new Date(guess), zone).offset * 60000;
    instant = guess - wallClock(new Date(instant), zone).offset * 60000;
    return new Date(instant);
  }
  const parsed = new Date(text);
  return Number.isNaN(parsed.getTime()) ? null : parsed;
}
