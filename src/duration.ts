const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `90s`, `15m`, `24h`, `30d`, `1h30m`. A bare number is refused: `90` read as
 * milliseconds would cancel every run at once, read as seconds it would
 * disagree with `--grace`; the unit says which.
 */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) throw new Error(`"${text}" has no unit; write ${trimmed}s, ${trimmed}m or ${trimmed}h (ms for milliseconds)`);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;
  let total = 0;
  let consumed = 0;
  for (let match = re.exec(trimmed); match; match = re.exec(trimmed)) {
    total += Number(match[1]) * (UNITS[match[2] ?? "ms"] ?? 1);
    consumed = re.lastIndex;
  }
  if (consumed === 0 || consumed !== trimmed.length) {
    throw new Error(`"${text}" is not a duration; write a number with a unit: 90s, 15m, 24h, 30d`);
  }
  return Math.round(total);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${Math.round(s % 60)}s`;
  return `${Math.floor(m / 60)}h${m % 60}m`;
}
