import { describe, expect, it } from "vitest";
import { journalBody, journalRunSchema } from "../../src/daemon/daemon-db-queue.js";
import type { QueuedRun } from "../../src/daemon/types.js";

/** An undo waiting in the daemon's queue when it stops comes back as that undo, never as a plain run of the automation. */
describe("an undo in the daemon's queue journal", () => {
  it("keeps what it takes back across a restart", () => {
    const run: QueuedRun = {
      id: "r1", automation: "3", account: "demo", mode: "prod", trigger: "api", diff: false, force: true, notify: false, email: null,
      undo: { of: "r0", identifiers: ["bn-1"], fields: ["stock"] },
    };
    const parsed = journalRunSchema.parse(JSON.parse(journalBody(run)));
    expect(parsed).toEqual(run);
    const plain = journalRunSchema.parse(JSON.parse(journalBody({ ...run, undo: undefined })));
    expect(plain.undo).toBeUndefined();
  });
});
