import { z } from "zod";

/**
 * The CloudEvents envelope of a webhook delivery (seed part 2.5), checked at
 * the edge. Only what the daemon acts on is required: the event id (the
 * idempotency key part 6 names) and the type; `data` names the order when the
 * event is about one. Unknown fields are allowed, as a later service version
 * may add some.
 */
const envelopeSchema = z.object({
  specversion: z.literal("1.0"),
  type: z.string().min(3).max(200),
  id: z.string().min(1).max(200),
  source: z.string().max(500).optional(),
  time: z.string().max(64).optional(),
  data: z
    .object({
      oid: z.union([z.number().int(), z.string().max(64)]).optional(),
      resource_type: z.string().max(64).optional(),
      resource_id: z.union([z.number().int(), z.string().max(64)]).optional(),
    })
    .loose()
    .optional(),
});

export interface WebhookEvent {
  id: string;
  /** Without the service's prefix: `order.created` for `sds.order.created`, as a definition's `events` names it. */
  type: string;
  /** The order the event is about, when it is an order event. */
  orderId: string | null;
}

/** `<prefix>.<category>.<action>` to `<category>.<action>`; a type sent without a prefix is kept. */
export function unprefixedType(type: string): string {
  return type.split(".").slice(-2).join(".");
}

/** The event in a delivery's body, or the reason it is not one (the answer is a 400 naming it). */
export function parseEnvelope(body: Buffer): WebhookEvent | { problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    return { problem: "the body is not JSON: a delivery is a CloudEvents envelope" };
  }
  const parsed = envelopeSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`);
    return { problem: `the body is not a CloudEvents 1.0 envelope with id and type: ${problems.join("; ")}` };
  }
  const { id, type, data } = parsed.data;
  const isOrder = data?.resource_type === undefined || data.resource_type === "order";
  const oid = isOrder ? (data?.oid ?? data?.resource_id) : undefined;
  return { id, type: unprefixedType(type), orderId: oid === undefined || oid === "" ? null : String(oid) };
}
