import { createHmac, timingSafeEqual } from "node:crypto";

/** Seed part 6 leaves the tolerance open; five minutes either way, as Standard Webhooks receivers use. */
export const TIMESTAMP_TOLERANCE_MS = 5 * 60_000;

export interface SignedHeaders {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
}

/** Why a delivery was refused: `stale` is answered 400, `missing` and `malformed` 400, `mismatch` 401. */
export type SignatureRefusal = { reason: "missing" | "malformed" | "stale" | "mismatch"; message: string };

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.replace(/^whsec_/, ""), "base64");
}

function expected(secret: string, id: string, timestamp: string, body: Buffer): Buffer {
  // Over the bytes as they arrived: a parsed and re-serialised body would not be what the service signed.
  return createHmac("sha256", keyOf(secret)).update(`${id}.${timestamp}.`).update(body).digest();
}

/** The `v1,<base64>` entries of the header; other versions are skipped, as a rotation to a new scheme would add them beside v1. */
function candidates(header: string): Buffer[] {
  const out: Buffer[] = [];
  for (const part of header.split(" ")) {
    const comma = part.indexOf(",");
    if (comma < 0 || part.slice(0, comma) !== "v1") continue;
    const b64 = part.slice(comma + 1);
    if (/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) out.push(Buffer.from(b64, "base64"));
  }
  return out;
}

/**
 * Checks a webhook delivery (seed part 6): the timestamp within five minutes
 * of now either way, then an HMAC-SHA256 keyed by the base64-decoded secret
 * over `<Webhook-Id>.<Webhook-Timestamp>.<body>`. Any `v1,` entry of the
 * header matching any of the secrets (the current and, during a rotation, the
 * previous one) passes; every comparison is constant-time. The refusal never
 * quotes a signature or a secret.
 */
export function verifySignature(body: Buffer, headers: SignedHeaders, secrets: readonly string[], nowMs: number): { ok: true } | SignatureRefusal {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) {
    const missing = [!id && "Webhook-Id", !timestamp && "Webhook-Timestamp", !signature && "Webhook-Signature"].filter(Boolean).join(", ");
    return { reason: "missing", message: `missing header ${missing}: a delivery carries Webhook-Id, Webhook-Timestamp and Webhook-Signature` };
  }
  if (!/^\d{1,12}$/.test(timestamp)) return { reason: "malformed", message: "Webhook-Timestamp must be a Unix time in whole seconds" };
  const skewMs = Math.abs(nowMs - Number(timestamp) * 1000);
  if (skewMs > TIMESTAMP_TOLERANCE_MS) {
    return { reason: "stale", message: `Webhook-Timestamp is ${Math.round(skewMs / 1000)} s away from this daemon's clock; at most ${TIMESTAMP_TOLERANCE_MS / 1000} s either way is accepted` };
  }
  const given = candidates(signature);
  let matched = false;
  for (const secret of secrets) {
    const want = expected(secret, id, timestamp, body);
    // Every pair is compared, so the time taken does not tell which entry or secret came close.
    for (const sig of given) if (sig.length === want.length && timingSafeEqual(sig, want)) matched = true;
  }
  return matched ? { ok: true } : { reason: "mismatch", message: "Webhook-Signature does not match: no v1 signature is the HMAC of this delivery under the endpoint's secret" };
}
