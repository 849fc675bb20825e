import type { Readable } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { createConnector, connectorSpec } from "../../../connectors/index.js";
import { isPartName, isPlainName } from "../../../connectors/storage-paths.js";
import type { MetadataStore } from "../../../connectors/types.js";
import { compileNamePattern, resolveAutomation, type Automation } from "../../definition/index.js";
import { toConveyorError } from "../../errors.js";
import { HttpError, badRequest, fields, text } from "../../http/envelopes.js";
import type { AutomationKind } from "../definitions-store.js";
import type { RunRequest } from "../types.js";
import { accountOf, type ApiContext } from "./context.js";
import { checkDeclaredSize, spoolBody } from "./feed-spool.js";
import { pathId, rejectUnknown } from "./query.js";

/**
 * `PUT /v3/automations/{custom|installed}/{id}/files/{name}` (issue #30): a
 * supplier pushes its feed instead of waiting for the next scheduled listing.
 * Only for an import whose connection is the service's own storage (sdsftp,
 * sds3), under a plain name one of its file configs' `name` takes. The body
 * is streamed (Fastify never parses it), stored atomically in the
 * automation's folder, and a run of the automation is queued.
 */

/** Fastify hands the body over as it is; the stream hides behind a private field so the key check of body.ts walks nothing. */
class StreamedBody {
  readonly #stream: Readable;
  constructor(stream: Readable) {
    this.#stream = stream;
  }
  get stream(): Readable {
    return this.#stream;
  }
}

/** Storage connectors keep no state between runs. */
const NO_METADATA: MetadataStore = { get: () => undefined, set: async () => undefined };

const MAX_NAME = 255;

function checkName(name: string): void {
  // eslint-disable-next-line no-control-regex
  if (!isPlainName(name) || name.includes("..") || /[\u0000-\u001f\u007f]/.test(name) || name.length > MAX_NAME) {
    throw badRequest(`file name ${JSON.stringify(name)} is not allowed: give a plain file name (no /, \\, .., NUL or control characters, at most ${MAX_NAME} characters)`);
  }
  if (isPartName(name)) throw badRequest(`file name ${JSON.stringify(name)} is not allowed: a name of the form .<name>.part is the storage's own for uploads under way`);
}

/** The automation as a run would see it (parameters resolved): its storage folder and the names its file configs take. */
function pushTarget(ctx: ApiContext, automation: Automation, id: number): Automation {
  const storage = automation.connection ? connectorSpec(automation.connection.type)?.storage === true : false;
  if (automation.action !== "import" || !storage) {
    const what = `a ${automation.type} ${automation.action}${automation.connection ? ` over ${automation.connection.type}` : " without a connection"}`;
    throw badRequest(`automation ${id} is ${what}: files are pushed only to imports whose connection is the service's storage (sdsftp or sds3)`);
  }
  return resolveAutomation(automation, { runId: "push", now: ctx.now(), ...(ctx.secretKey ? { secretKey: ctx.secretKey } : {}) });
}

function checkMatches(automation: Automation, name: string): void {
  const patterns = automation.file_configs.map((fc) => fc.name);
  // A file config without `name` takes every file of the folder.
  if (patterns.some((p) => p === undefined || compileNamePattern(p).test(name))) return;
  throw badRequest(`file name ${JSON.stringify(name)} matches no file config's name; allowed: ${patterns.map((p) => JSON.stringify(p)).join(", ")} (regular expressions over the whole name)`);
}

export function registerPushFeed(app: FastifyInstance, ctx: ApiContext, kind: AutomationKind): void {
  const limit = ctx.settings.pushMaxBytes;
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, payload, done) => done(null, new StreamedBody(payload)));
    scope.put(`/v3/automations/${kind}/:id/files/:name`, { bodyLimit: limit }, async (request, reply) => {
      rejectUnknown(request, []);
      const account = accountOf(request);
      const id = pathId(request);
      // Another account's automation is answered exactly as a missing one: 404.
      const stored = await ctx.definitions.own(account, kind, id);
      const name = text(fields(request.params).name) ?? "";
      checkName(name);
      const automation = pushTarget(ctx, ctx.definitions.effective(stored).automation, id);
      checkMatches(automation, name);
      checkDeclaredSize(text(request.headers["content-length"]), limit);
      const spooled = await spoolBody(bodyStream(request), ctx.settings.dataDir, limit).catch((err: unknown) => {
        // The rest of a refused body is not read: the connection closes after the answer.
        void reply.header("Connection", "close");
        throw err;
      });
      try {
        await storeFeed(ctx, automation, account, spooled.file, name);
      } finally {
        await spooled.discard();
      }
      const runId = await queuePushedRun(ctx, String(stored.id), account, name);
      ctx.logger.info({ event: "feed_pushed", automation: String(stored.id), account, file: name, bytes: spooled.bytes, run_id: runId }, "a pushed feed was stored and its run queued");
      return reply.code(201).send({ file: name, bytes: spooled.bytes, sha256: spooled.sha256, run_id: runId });
    });
  });
}

function bodyStream(request: FastifyRequest): Readable {
  // No Content-Type at all: Fastify parses nothing and the body is still the raw request.
  return request.body instanceof StreamedBody ? request.body.stream : request.raw;
}

async function storeFeed(ctx: ApiContext, automation: Automation, account: string, file: string, name: string): Promise<void> {
  const connection = automation.connection;
  if (!connection) throw new HttpError(500, "the automation lost its connection");
  const connector = createConnector(connection, { settings: ctx.settings, logger: ctx.logger, metadata: NO_METADATA, apiUser: account });
  try {
    await connector.upload(file, name);
  } catch (err) {
    const e = toConveyorError(err);
    throw new HttpError(e.code === "unsafe_path" ? 400 : 502, `the file could not be stored: ${e.message}`);
  } finally {
    await connector.close().catch(() => undefined);
  }
}

async function queuePushedRun(ctx: ApiContext, key: string, account: string, name: string): Promise<string> {
  const run: RunRequest = { automation: key, account, mode: "prod", trigger: "api", diff: false, force: false, notify: false, email: null };
  try {
    const result = ctx.intake ? await ctx.intake.enqueue(run) : ctx.queue.enqueue(run);
    return result.id;
  } catch (err) {
    throw new HttpError(503, `${name} was stored, but its run could not be queued (${toConveyorError(err).message}); the next scheduled run reads it`);
  }
}
