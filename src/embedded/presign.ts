import { createHmac, timingSafeEqual } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import { sendError } from "../http/envelopes.js";

/** Links to result and export CSVs are valid this long (service.md: 30 minutes). */
export const PRESIGN_TTL_SECONDS = 30 * 60;

/**
 * Presigned links to files under `<data>/embedded/files/`: the name and the
 * expiry are signed with HMAC-SHA256 under a key generated once per data
 * folder, so a link works without auth headers, stops working after its
 * expiry, and any change to name or expiry is refused (403).
 */
export class Presigner {
  constructor(
    private readonly key: string,
    private readonly filesDir: string,
    private readonly baseUrl: () => string,
    private readonly now: () => number,
    private readonly ttlSeconds: number = PRESIGN_TTL_SECONDS,
  ) {}

  private sign(name: string, expires: number): string {
    return createHmac("sha256", this.key).update(`${name}\n${expires}`).digest("hex");
  }

  url(name: string): string {
    const expires = Math.floor(this.now() / 1000) + this.ttlSeconds;
    return `${this.baseUrl()}/files/${encodeURIComponent(name)}?expires=${expires}&signature=${this.sign(name, expires)}`;
  }

  /** Why a link is refused, or undefined when it is good. */
  check(name: string, expires: string | undefined, signature: string | undefined): string | undefined {
    if (!expires || !signature || !/^\d+$/.test(expires)) return "the link lacks its expiry or signature";
    const expected = Buffer.from(this.sign(name, Number(expires)), "hex");
    const given = Buffer.from(signature, "hex");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "the link's signature does not match";
    if (Math.floor(this.now() / 1000) > Number(expires)) return "the link has expired; ask for the status again for a fresh link";
    return undefined;
  }

  path(name: string): string {
    return path.join(this.filesDir, path.basename(name));
  }

  register(app: FastifyInstance): void {
    app.get<{ Params: { name: string }; Querystring: { expires?: string; signature?: string } }>("/files/:name", { config: { public: true } }, async (request, reply) => {
      const name = path.basename(request.params.name);
      const problem = this.check(name, request.query.expires, request.query.signature);
      if (problem) return sendError(request, reply, 403, problem);
      const file = this.path(name);
      if (!existsSync(file)) return sendError(request, reply, 404, `file ${name} is gone`);
      return reply.type("text/csv; charset=utf-8").header("content-disposition", `attachment; filename="${name}"`).send(createReadStream(file));
    });
  }
}
