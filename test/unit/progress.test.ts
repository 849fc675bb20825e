import { describe, expect, it } from "vitest";
import { progressFields, type ProgressState } from "../../src/cli-output/progress.js";

describe("the run's progress line", () => {
  it("measures the rate while rows come in and keeps it through apply, where a bar counts the bulk files", () => {
    const state: ProgressState = { readingSince: null, rate: 0 };
    expect(progressFields({ stage: "fetch", rows: 0 }, state, 0)).toMatchObject({ rate: "0", files: "" });
    progressFields({ stage: "read", rows: 0 }, state, 1_000);
    expect(progressFields({ stage: "plan", rows: 50_000 }, state, 3_000)).toMatchObject({ stage: "plan   ", rows: "50,000 rows", rate: "25,000" });
    // Apply waits on the service: the rate of the read stays, it does not fall with the waiting.
    const apply = progressFields({ stage: "apply", rows: 60_000, done: 6, total: 24 }, state, 60_000);
    expect(apply.rate).toBe("25,000");
    expect(apply.files).toBe(`${"█".repeat(5)}${"░".repeat(15)} 6/24 bulk files | `);
  });
});
