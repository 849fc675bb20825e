/**
 * Short decimal texts as 32-bit integers, and back to the same text. A
 * diff run holds the stock and price of its scope's records this way
 * (held-scope.ts), four bytes a value instead of a row in the work
 * database. Only a text that comes back exactly is coded: a plain decimal
 * without leading zeros or a plus sign, at most three digits after the
 * point and nine before it, or the empty text. Anything else ("1e3",
 * "007", " 5", "12,50") is left to the work database.
 *
 * A code is the decimal's digits as one integer, times four, plus the
 * number of digits after the point, negated for a negative decimal.
 *
 * @module
 */

/** No value held: the one code no text has. */
export const NO_CODE = -0x8000_0000;
/** The empty text. */
const EMPTY_CODE = 0x7fff_ffff;
/** Codes are `digits * 4 + decimals`: digits below this keep every code under EMPTY_CODE. */
const DIGITS_LIMIT = 0x1fff_ffff;

const DECIMAL = /^(-?)(0|[1-9]\d{0,8})(?:\.(\d{1,3}))?$/;

/** The code of `text`, or NO_CODE when it is not a decimal that codes exactly. */
export function decimalCode(text: string): number {
  if (text === "") return EMPTY_CODE;
  const m = DECIMAL.exec(text);
  if (m === null) return NO_CODE;
  const fraction = m[3] ?? "";
  const digits = Number((m[2] ?? "") + fraction);
  // "-0" and "-0.00" would come back without their sign.
  if (digits >= DIGITS_LIMIT || (digits === 0 && m[1] === "-")) return NO_CODE;
  const code = digits * 4 + fraction.length;
  return m[1] === "-" ? -code : code;
}

/** The text a code was made from. */
export function decimalText(code: number): string {
  if (code === EMPTY_CODE) return "";
  const magnitude = Math.abs(code);
  const decimals = magnitude % 4;
  let digits = String((magnitude - decimals) / 4);
  if (decimals > 0) {
    digits = digits.padStart(decimals + 1, "0");
    digits = `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
  }
  return code < 0 ? `-${digits}` : digits;
}
