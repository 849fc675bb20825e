import { z } from "zod";
import { ConveyorError } from "../errors.js";
import { registerSecret } from "../secrets.js";
import type { ServiceCaller } from "./http.js";

/** What the daemon sends to register its intake (seed part 4.5; the seed shows no bodies, the embedded service settles them). */
export interface EndpointInput {
  url: string;
  description: string;
  event_types: string[];
  enabled: boolean;
}

const endpointSchema = z.object({
  id: z.string().min(1),
  url: z.string(),
  event_types: z.array(z.string()),
  enabled: z.boolean(),
  secret: z.string().min(1).optional(),
});

export type WebhookEndpoint = z.infer<typeof endpointSchema>;

function endpointOf(body: unknown, what: string): WebhookEndpoint {
  const parsed = endpointSchema.safeParse(body);
  if (!parsed.success) {
    throw new ConveyorError("service_http", `${what} answered without an endpoint {id, url, event_types, enabled}: ${parsed.error.issues.map((i) => i.path.join(".") || "body").join(", ")}`);
  }
  // Masked from here on in every log line and error.
  if (parsed.data.secret) registerSecret(parsed.data.secret);
  return parsed.data;
}

/** `POST /v3/webhooks/endpoints`: the endpoint with its signing secret, which the service shows this once. */
export async function createEndpoint(caller: ServiceCaller, input: EndpointInput, signal?: AbortSignal): Promise<WebhookEndpoint & { secret: string }> {
  const res = await caller.send({ method: "POST", path: "/v3/webhooks/endpoints", json: input, signal });
  const endpoint = endpointOf(res.body, "POST /v3/webhooks/endpoints");
  if (!endpoint.secret) throw new ConveyorError("service_http", "POST /v3/webhooks/endpoints answered without the signing secret");
  return { ...endpoint, secret: endpoint.secret };
}

/** `GET /v3/webhooks/endpoints/{id}`; null when the service no longer has it. */
export async function getEndpoint(caller: ServiceCaller, id: string, signal?: AbortSignal): Promise<WebhookEndpoint | null> {
  const path = `/v3/webhooks/endpoints/${encodeURIComponent(id)}`;
  try {
    return endpointOf((await caller.send({ method: "GET", path, signal })).body, `GET ${path}`);
  } catch (err) {
    if (err instanceof ConveyorError && err.details.status === 404) return null;
    throw err;
  }
}

/** `PATCH /v3/webhooks/endpoints/{id}`: the same body sent twice changes nothing, so it is retried like a read. */
export async function updateEndpoint(caller: ServiceCaller, id: string, patch: Partial<EndpointInput>, signal?: AbortSignal): Promise<WebhookEndpoint> {
  const path = `/v3/webhooks/endpoints/${encodeURIComponent(id)}`;
  return endpointOf((await caller.send({ method: "PATCH", path, json: patch, idempotent: true, signal })).body, `PATCH ${path}`);
}

/** `DELETE /v3/webhooks/endpoints/{id}`; an endpoint already gone counts as deleted. */
export async function deleteEndpoint(caller: ServiceCaller, id: string, signal?: AbortSignal): Promise<void> {
  const path = `/v3/webhooks/endpoints/${encodeURIComponent(id)}`;
  try {
    await caller.send({ method: "DELETE", path, idempotent: true, signal });
  } catch (err) {
    if (err instanceof ConveyorError && err.details.status === 404) return;
    throw err;
  }
}

/** `POST /v3/webhooks/endpoints/{id}/rotate-secret`: the new secret; the service stops signing with the old one at once. */
export async function rotateSecret(caller: ServiceCaller, id: string, signal?: AbortSignal): Promise<string> {
  const path = `/v3/webhooks/endpoints/${encodeURIComponent(id)}/rotate-secret`;
  const res = await caller.send({ method: "POST", path, signal });
  const secret = z.object({ secret: z.string().min(1) }).safeParse(res.body);
  if (!secret.success) throw new ConveyorError("service_http", `POST ${path} answered without the new secret`);
  registerSecret(secret.data.secret);
  return secret.data.secret;
}
