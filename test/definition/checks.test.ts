import { afterEach, describe, expect, it, vi } from "vitest";
import { checkTimezone } from "../../src/definition/checks.js";

describe("checkTimezone", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("accepts UTC, the default, without asking Intl (which loads ICU's zone data)", () => {
    const format = vi.spyOn(Intl, "DateTimeFormat");
    expect(checkTimezone("UTC")).toBeNull();
    expect(format).not.toHaveBeenCalled();
  });

  it("asks Intl about any other zone", () => {
    const format = vi.spyOn(Intl, "DateTimeFormat");
    expect(checkTimezone("Europe/Berlin")).toBeNull();
    expect(checkTimezone("Etc/UTC")).toBeNull();
    expect(checkTimezone("Mars/Base")).toBe('"Mars/Base" is not an IANA time zone');
    expect(format).toHaveBeenCalledTimes(3);
  });
});
