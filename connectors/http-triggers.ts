import { ConveyorError, isConveyorError } from "../src/errors.js";
import { registerSecret, registerUrlSecrets } from "../src/secrets.js";
import type { HttpRequest, HttpResponse } from "./http-client.js";
import { safeUrl } from "./http-client.js";
import type { HttpTrigger } from "./http-connection.js";
import { payloadQuery, type HttpExchange } from "./http-exchange.js";
import { pollTrigger } from "./http-poll.js";
import { secretTriggers, triggerValue, type TriggerAnswer } from "./http-values.js";

// `triggers`: the preliminary requests of an http connection, run in order
// before the final request (the download of an import, the upload or send of
// an export). Each goes through the connection's retry and its single OAuth
// refresh after a 401, and yields one value for the requests after it.

/** A trigger's answer is read whole to find its value: a status, a token, a link. Past this it is not one. */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** The body of a trigger's answer as text, refusing one past MAX_ANSWER_BYTES. */
export async function readAnswer(res: HttpResponse, where: string): Promise<TriggerAnswer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      res.body.destroy();
      throw new ConveyorError("protocol", `${where}: the answer is larger than ${MAX_ANSWER_BYTES / (1024 * 1024)} MB; a trigger's answer holds a value, not a feed`, {
        hint: "make the feed the final request (the connection's address), not a trigger",
      });
    }
    chunks.push(chunk);
  }
  return { status: res.status, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") };
}

/** The method of a trigger: as written, else POST when it sends something and GET when not. */
export function triggerMethod(t: HttpTrigger): string {
  return (t.method ?? (t.payload !== undefined || t.body !== undefined ? "POST" : "GET")).toUpperCase();
}

/** The request of trigger `t` with the values found so far filled in; its own headers go on top of the connection's. */
export function triggerRequest(ex: HttpExchange, t: HttpTrigger, where: string): { make: () => HttpRequest; own: Record<string, string> } {
  const method = triggerMethod(t);
  const url = ex.values.fillAddress(t.address);
  registerUrlSecrets(url);
  // A parameter can make the address anything; say which one is wrong before anything is sent.
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    throw new ConveyorError("definition_invalid", `${where}.address ${safeUrl(url)} is not an http(s) URL`, { hint: "write it as https://host/path (check the parameters it uses)" });
  const own = Object.fromEntries(Object.entries(t.headers ?? {}).map(([k, v]) => [k, ex.values.fill(v)]));
  const payload = ex.values.fillDeep(t.payload ?? {}) as Record<string, unknown>;
  const typed = Object.keys(own).some((k) => k.toLowerCase() === "content-type");
  const accept = { accept: "application/json, */*" };
  if (method === "GET" || method === "HEAD") {
    const target = new URL(url);
    for (const [k, v] of payloadQuery(payload)) if (!target.searchParams.has(k)) target.searchParams.append(k, v);
    return { make: () => ({ method, url: target.toString(), headers: accept }), own };
  }
  if (t.body !== undefined) {
    const body = ex.values.fill(t.body);
    // A body that reads as JSON is sent as JSON unless the trigger's headers say what it is.
    const type: Record<string, string> = typed ? {} : { "content-type": /^\s*[[{]/.test(body) ? "application/json" : "text/plain; charset=utf-8" };
    return { make: () => ({ method, url, headers: { ...accept, ...type }, body }), own };
  }
  return { make: () => ({ method, url, headers: { ...accept, "content-type": "application/json" }, body: JSON.stringify(payload) }), own };
}

/** One exchange of a trigger, under the connection's retry: a 429 or 5xx, or a broken answer, is sent again. */
export function exchange(ex: HttpExchange, make: () => HttpRequest, own: Record<string, string>, where: string): Promise<TriggerAnswer> {
  return ex.withRetry(async () => readAnswer(await ex.send(make, own), where));
}

/** A run canceled during a trigger says which one it stopped, whether it was waiting or asking. */
async function named<T>(where: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (isConveyorError(err) && err.code === "canceled" && !err.message.includes(where)) throw new ConveyorError("canceled", `canceled during ${where}: ${err.message}`, { cause: err });
    throw err;
  }
}

/**
 * Runs every trigger of the connection in order, pushing each one's value
 * onto `ex.values`. A value that is a credential is registered as a secret
 * before anything can log or quote it.
 */
export async function runTriggers(ex: HttpExchange): Promise<void> {
  const triggers = ex.conn.triggers ?? [];
  const secret = secretTriggers(ex.conn);
  for (const [i, t] of triggers.entries()) {
    const where = `connection.triggers[${i}]`;
    const { make, own } = triggerRequest(ex, t, where);
    const started = Date.now();
    const { answer, requests } = await named(where, () => (t.poll ? pollTrigger(ex, t.poll, () => exchange(ex, make, own, where), where) : exchange(ex, make, own, where).then((a) => ({ answer: a, requests: 1 }))));
    const value = triggerValue(t, answer, where);
    if (secret.has(i + 1)) registerSecret(value);
    ex.values.found.push(value);
    const url = safeUrl(make().url);
    ex.ctx.logger.info({ trigger: i + 1, method: triggerMethod(t), url, status: answer.status, requests, ms: Date.now() - started }, `http trigger ${i + 1} of ${triggers.length} answered`);
  }
}
