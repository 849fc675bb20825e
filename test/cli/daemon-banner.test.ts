import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { daemonBanner } from "../helpers/daemon-banner.js";

const dir = mkdtempSync(path.join(tmpdir(), "conveyor-banner-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function banner(extra: Record<string, string>): Promise<string> {
  return daemonBanner(path.join(dir, "data"), extra);
}

describe("`conveyor daemon` start-up banner", () => {
  it("shows a token it made, and never one the settings gave it", async () => {
    const given = await banner({ CONVEYOR_API_USER: "merchant", CONVEYOR_API_TOKEN: "PRODUCTION-TOKEN-abcdef123" });
    expect(given).toContain("API user:  merchant");
    expect(given).toContain("API token: (the one in CONVEYOR_API_TOKEN)");
    expect(given).not.toContain("PRODUCTION-TOKEN-abcdef123");
    const made = await banner({ CONVEYOR_API_USER: "", CONVEYOR_API_TOKEN: "" });
    expect(made).toMatch(/^API token: [0-9a-f]{32,}$/m);
  }, 60_000);
});
