import { ConveyorError } from "../../src/errors.js";
import type { FieldSource } from "../../src/mapping/index.js";

/** A row of the in-test source: cells of a CSV-like table, or one fixed-width line in `cells[0]`. */
export interface TestRow {
  cells: string[];
  error?: string;
}

export interface TestSourceOptions {
  /** Report no header (as fixed-width and JSONPath readers do). */
  unlisted?: boolean;
  /** Throw header_mismatch for names matching several columns, as a reader that matches loosely does. */
  throwOnAmbiguous?: boolean;
}

/** A `FieldSource` over arrays of strings: exact column names, offsets on the first cell. */
export function tableSource(columns: string[], options: TestSourceOptions = {}): FieldSource<TestRow> & { asked: Array<string | [number, number]> } {
  const asked: Array<string | [number, number]> = [];
  return {
    asked,
    columns: async () => (options.unlisted ? null : [...columns]),
    accessor(ref) {
      asked.push(ref);
      if (Array.isArray(ref)) {
        const [start, end] = ref;
        return (row) => row.cells[0]?.slice(start, end).trim();
      }
      if (options.throwOnAmbiguous) {
        const loose = columns.filter((c) => c.trim().toLowerCase() === ref.trim().toLowerCase());
        if (loose.length > 1) throw new ConveyorError("header_mismatch", `"${ref}" matches ${loose.join(", ")}`);
      }
      const index = columns.indexOf(ref);
      if (index < 0) return null;
      return (row) => row.cells[index];
    },
  };
}

export function row(...cells: string[]): TestRow {
  return { cells };
}
