import { describe, expect, it } from "vitest";
import { NO_CODE, decimalCode, decimalText } from "../../../src/pipeline/import/decimal-codes.js";

describe("decimal codes", () => {
  it("give back exactly the text they were made from", () => {
    const texts = ["", "0", "1", "-1", "9", "10", "12.5", "12.50", "12.500", "0.5", "-0.5", "0.05", "0.005", "-0.005", "0.000", "1.0", "536870910", "53687091.0", "999999.99", "-999999.99", "-536870910"];
    for (let i = 0; i < 5000; i++) {
      const whole = String(Math.floor(Math.random() * 10 ** (1 + (i % 5))));
      const decimals = i % 4;
      const fraction = decimals === 0 ? "" : `.${String(Math.floor(Math.random() * 10 ** decimals)).padStart(decimals, "0")}`;
      texts.push(`${i % 3 === 0 ? "-" : ""}${whole}${fraction}`);
    }
    for (const text of texts) {
      if (text === "-0" || /^-0(\.0+)?$/.test(text)) continue;
      const code = decimalCode(text);
      expect(code, text).not.toBe(NO_CODE);
      expect(decimalText(code), text).toBe(text);
    }
  });

  it("leave to the work database what would not come back the same", () => {
    for (const text of ["-0", "-0.00", "007", "+5", " 5", "5 ", "1e3", "12,50", "1.2345", ".5", "5.", "536870911", "5368709110", "NaN", "Infinity", "٣", "0x10", "1_000"]) {
      expect(decimalCode(text), text).toBe(NO_CODE);
    }
  });
});
