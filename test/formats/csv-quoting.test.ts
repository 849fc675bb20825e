import { describe, expect, it } from "vitest";
import { csvField } from "../../src/formats/index.js";

/** The quoting before it became one regular expression test: five scans and a trim. */
function scanned(value: string, delimiter: string, enclosure: string): string {
  const must = value.includes(delimiter) || value.includes(enclosure) || value.includes("\n") || value.includes("\r") || (value.length > 0 && value.trim() !== value);
  return must ? enclosure + value.split(enclosure).join(enclosure + enclosure) + enclosure : value;
}

describe("csvField", () => {
  const values = ["", "plain", "a,b", 'say "hi"', "line\nbreak", "cr\rhere", " lead", "trail ", "\ttab", "nbsp\u00a0", "a;b", "a|b", "a]b", "a^b", "a-b", "a\\b", "a'b", "Bolt & Nut"];
  for (const [delimiter, enclosure] of [[",", '"'], [";", '"'], ["\t", '"'], ["|", "'"], ["]", "^"], ["-", "\\"], ["^", "]"]] as const) {
    it(`quotes as before with delimiter ${JSON.stringify(delimiter)} and enclosure ${JSON.stringify(enclosure)}`, () => {
      for (const v of values) expect(csvField(v, delimiter, enclosure)).toBe(scanned(v, delimiter, enclosure));
    });
  }
});
