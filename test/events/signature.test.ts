import { describe, expect, it } from "vitest";
import { signature } from "../../src/embedded/webhook-dispatch.js";
import { verifySignature } from "../../src/events/signature.js";

const SECRET = `whsec_${Buffer.from("a".repeat(24)).toString("base64")}`;
const OTHER = `whsec_${Buffer.from("b".repeat(24)).toString("base64")}`;
const NOW = 1_800_000_000_000;
const TS = Math.floor(NOW / 1000);
const BODY = '{"specversion":"1.0","type":"sds.order.created","id":"evt_1","data":{"oid":7}}';

function headers(sig: string, ts = TS, id = "msg_1"): { id: string; timestamp: string; signature: string } {
  return { id, timestamp: String(ts), signature: sig };
}

describe("verifySignature", () => {
  it("accepts the embedded service's own signature over the raw body", () => {
    expect(verifySignature(Buffer.from(BODY), headers(signature(SECRET, "msg_1", TS, BODY)), [SECRET], NOW)).toEqual({ ok: true });
  });

  it("accepts the previous secret during a rotation, and any of several v1 entries", () => {
    const old = signature(OTHER, "msg_1", TS, BODY);
    expect(verifySignature(Buffer.from(BODY), headers(old), [SECRET, OTHER], NOW)).toEqual({ ok: true });
    const several = `v1,${Buffer.alloc(32).toString("base64")} v2,abc ${signature(SECRET, "msg_1", TS, BODY)}`;
    expect(verifySignature(Buffer.from(BODY), headers(several), [SECRET], NOW)).toEqual({ ok: true });
  });

  it("refuses a wrong secret, a changed body, another message id and a signature without v1", () => {
    const good = signature(SECRET, "msg_1", TS, BODY);
    expect(verifySignature(Buffer.from(BODY), headers(signature(OTHER, "msg_1", TS, BODY)), [SECRET], NOW)).toMatchObject({ reason: "mismatch" });
    expect(verifySignature(Buffer.from(`${BODY} `), headers(good), [SECRET], NOW)).toMatchObject({ reason: "mismatch" });
    expect(verifySignature(Buffer.from(BODY), headers(good, TS, "msg_2"), [SECRET], NOW)).toMatchObject({ reason: "mismatch" });
    expect(verifySignature(Buffer.from(BODY), headers(good.slice(3)), [SECRET], NOW)).toMatchObject({ reason: "mismatch" });
  });

  it("refuses a timestamp more than five minutes old or ahead, naming the skew", () => {
    const stale = TS - 301;
    const r = verifySignature(Buffer.from(BODY), headers(signature(SECRET, "msg_1", stale, BODY), stale), [SECRET], NOW);
    expect(r).toMatchObject({ reason: "stale" });
    expect("message" in r && r.message).toContain("301 s");
    const future = TS + 301;
    expect(verifySignature(Buffer.from(BODY), headers(signature(SECRET, "msg_1", future, BODY), future), [SECRET], NOW)).toMatchObject({ reason: "stale" });
    const edge = TS - 299;
    expect(verifySignature(Buffer.from(BODY), headers(signature(SECRET, "msg_1", edge, BODY), edge), [SECRET], NOW)).toEqual({ ok: true });
  });

  it("names missing headers and a timestamp that is not a number, never quoting the signature", () => {
    const r = verifySignature(Buffer.from(BODY), { id: "msg_1", timestamp: undefined, signature: undefined }, [SECRET], NOW);
    expect(r).toMatchObject({ reason: "missing" });
    expect("message" in r && r.message).toContain("Webhook-Timestamp, Webhook-Signature");
    const sig = signature(SECRET, "msg_1", TS, BODY);
    const bad = verifySignature(Buffer.from(BODY), { id: "msg_1", timestamp: "soon", signature: sig }, [SECRET], NOW);
    expect(bad).toMatchObject({ reason: "malformed" });
    const wrong = verifySignature(Buffer.from(BODY), headers(signature(OTHER, "msg_1", TS, BODY)), [SECRET], NOW);
    expect(JSON.stringify(wrong)).not.toContain(signature(OTHER, "msg_1", TS, BODY).slice(3));
  });
});
