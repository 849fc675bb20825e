import { describe, expect, it } from "vitest";
import { clearCredentials, definitionWarnings, maskAutomation, resolveAutomation } from "../../src/definition/index.js";
import { MASK } from "../../src/secrets.js";
import { parsed, problemsOf, productImport, type Def } from "./helpers.js";

/** `triggers` and `pointers` of an http connection as the definition layer sees them: shapes, uses of values, warnings, masking. */

function httpImport(connection: Def, parameters: Def[] = [{ name: "partner url", value: "https://partner.example" }, { name: "api key", value: "key-7781-secret", encrypted: true }]): Def {
  return { ...productImport(), connection: { type: "http", method: "GET", payload: {}, ...connection }, parameters };
}

const REPORT: Def = {
  address: "{{trigger_value}}",
  headers: { "X-Api-Key": "<<api key>>" },
  triggers: [
    { method: "POST", address: "<<partner url>>/v1/reports", payload: { type: "products" }, jsonpath: "$.id" },
    { address: "<<partner url>>/v1/reports/{{trigger_value1}}", poll: { until: "$.status", equals: "done", interval: 0.5, backoff: 1.5, deadline: 600 }, jsonpath: "$.download_url" },
  ],
};

const paths = (def: Def): string[] => problemsOf(def).map((p) => `${p.path}: ${p.message}`);

describe("http triggers in a definition", () => {
  it("a report job parses, and resolution fills parameters but leaves trigger values and pointers for the connector", () => {
    const a = parsed(httpImport({ ...REPORT, address: "{{trigger_value}}", pointers: { since: { from: "$.updated_at", keep: "max", initial: "2026-01-01" } }, payload: { since: "{{pointer.since}}" } }));
    expect(definitionWarnings(a)).toEqual([]);
    const r = resolveAutomation(a, { runId: "r1", now: new Date("2026-03-01T00:00:00Z") });
    const c = r.connection as unknown as Def & { triggers: Def[]; payload: Def };
    expect(c.address).toBe("{{trigger_value}}");
    expect(c.payload.since).toBe("{{pointer.since}}");
    expect(c.triggers[0]?.address).toBe("https://partner.example/v1/reports");
    expect(c.triggers[1]?.address).toBe("https://partner.example/v1/reports/{{trigger_value1}}");
  });

  it("a request may use only the values of the triggers before it", () => {
    const def = httpImport({
      address: "https://partner.example/{{trigger_value3}}",
      triggers: [
        { address: "https://partner.example/a?x={{trigger_value}}", jsonpath: "$.id" },
        { address: "https://partner.example/b", headers: { "X-Id": "{{trigger_value2}}" }, jsonpath: "$.id" },
      ],
    });
    expect(paths(def)).toEqual(
      expect.arrayContaining([
        "connection.triggers[0].address: uses the value of trigger 1, but no trigger runs before this request",
        'connection.triggers[1].headers["X-Id"]: uses the value of trigger 2, but only 1 trigger run before this request',
        "connection.address: uses the value of trigger 3, but only 2 triggers run before this request",
      ]),
    );
  });

  it("refuses two selectors, a payload with a body, a regex without a group, a bad XPath, unknown keys and run-time values where none is filled", () => {
    const def = httpImport({
      address: "https://partner.example/feed",
      login_address: "https://partner.example/login/{{trigger_value}}",
      triggers: [
        { address: "https://partner.example/a", jsonpath: "$.id", regex: "id=(\\d+)" },
        { address: "https://partner.example/b", payload: {}, body: "x", regex: "id=\\d+" },
        { address: "ftp://partner.example/c", xpath: "/a[", pol: {} },
        { address: "https://partner.example/d", poll: { until: "status", interval: 0 } },
      ],
    });
    const found = paths(def).join("\n");
    expect(found).toContain("connection.triggers[0]: has jsonpath and regex: a trigger's value comes from one of them");
    expect(found).toContain("connection.triggers[1].body: a trigger sends a payload");
    expect(found).toContain("connection.triggers[1].regex: has no capture group");
    expect(found).toContain("connection.triggers[2].xpath: is not a valid XPath 1.0 expression");
    expect(found).toContain('connection.triggers[2].address: "ftp://partner.example/c" is not an http(s) URL');
    expect(found).toContain('connection.triggers[2].pol: unknown key "pol" in a trigger: did you mean "poll"?');
    expect(found).toContain("connection.triggers[3].poll.until: a JSONPath starts with $");
    expect(found).toContain("connection.triggers[3].poll.interval: 0 is not seconds from 0.01 to 3600");
    expect(found).toContain("connection.login_address: run-time values");
  });

  it("conveyor check warns about a trigger whose value nothing uses", () => {
    const a = parsed(httpImport({ address: "https://partner.example/feed", triggers: [{ method: "POST", address: "https://partner.example/warm-up", jsonpath: "$.id" }, { address: "https://partner.example/b/{{trigger_value}}" }] }));
    const warnings = definitionWarnings(a);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ path: "connection.triggers[1]", message: "the value of trigger 2 ({{trigger_value2}}) is never used by a later trigger or the final request" });
  });

  it("warns about a credential written in clear in a trigger's headers", () => {
    const a = parsed(httpImport({ address: "https://partner.example/f/{{trigger_value}}", triggers: [{ address: "https://partner.example/a", headers: { "X-Api-Key": "clear-key-1234", Accept: "*/*" }, jsonpath: "$.id" }] }));
    expect(clearCredentials(a).map((p) => p.path)).toEqual(["connection.triggers[0].headers.X-Api-Key"]);
  });

  it("masks a trigger's credential headers when the definition is shown", () => {
    const a = parsed(httpImport({ ...REPORT, triggers: [{ address: "https://partner.example/a", headers: { Authorization: "Bearer <<api key>>", Accept: "text/csv" }, jsonpath: "$.url" }] }));
    const shown = maskAutomation(resolveAutomation(a, { runId: "r1", now: new Date() }));
    const trigger = (shown.connection as unknown as { triggers: Array<{ headers: Def }> }).triggers[0];
    expect(trigger?.headers).toEqual({ Authorization: MASK, Accept: "text/csv" });
    expect(JSON.stringify(shown)).not.toContain("key-7781-secret");
  });
});
