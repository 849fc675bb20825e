import { createHmac, timingSafeEqual } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ServiceContext } from "./context.js";
import { metaValue } from "./db.js";
import { fields, sendError, text, unixTime, v1Failure } from "../http/envelopes.js";
import { OptionStore } from "./option-store.js";

/** Presigned asset links live 10 minutes (v1 part 4.7). */
export const ASSET_LINK_TTL_SECONDS = 10 * 60;
export const DEFAULT_ASSET_PATH = "media";

/** Where the account's asset files are: `<data>/embedded/assets/<path>/<file>`. */
export function assetsDir(ctx: ServiceContext): string {
  return path.join(ctx.paths.root, "assets");
}

/** `media` plus the paths of the option `image_media_locations` (comma or asterisk separated). */
export function validAssetPaths(options: OptionStore): string[] {
  const extra = (options.get("image_media_locations") ?? "").split(/[,*]/).map((p) => p.trim().replace(/^\/+|\/+$/g, "")).filter(Boolean);
  return [DEFAULT_ASSET_PATH, ...extra.filter((p) => p !== DEFAULT_ASSET_PATH && !p.split("/").includes(".."))];
}

/**
 * v1 part 4.7 over the sandbox's own storage: a listing of a media path and
 * presigned links to one file, signed with the service's presign key and
 * served without credentials until they expire.
 */
export function registerAssets(app: FastifyInstance, ctx: ServiceContext): void {
  const options = new OptionStore(ctx.db);
  const key = metaValue(ctx.db, "presign_key");
  const root = assetsDir(ctx);
  mkdirSync(path.join(root, DEFAULT_ASSET_PATH), { recursive: true });
  const sign = (rel: string, expires: number): string => createHmac("sha256", key).update(`asset\n${rel}\n${expires}`).digest("hex");
  const base = (request: FastifyRequest): string => `${request.protocol}://${request.host}`;
  const link = (request: FastifyRequest, rel: string): { url: string; expires: number } => {
    const expires = Math.floor(ctx.now() / 1000) + ASSET_LINK_TTL_SECONDS;
    return { url: `${base(request)}/asset-files/${rel.split("/").map(encodeURIComponent).join("/")}?expires=${expires}&signature=${sign(rel, expires)}`, expires };
  };

  app.get("/v1/assets", async (_request, reply) => reply.code(400).send(v1Failure("Invalid asset request", ctx.now())));

  app.get("/v1/assets/list", async (request) => {
    const asked = text(fields(request.query).path)?.trim().replace(/^\/+|\/+$/g, "") ?? "";
    const valid = validAssetPaths(options);
    const where = asked === "" ? DEFAULT_ASSET_PATH : asked;
    // A path that is not configured is a success with an empty list (v1 part 4.7), not an error.
    if (!valid.includes(where)) return { result: "success", path: where, media: [], paths: valid, time: unixTime(ctx.now()) };
    const dir = path.join(root, where);
    const names = existsSync(dir) ? readdirSync(dir).filter((n) => statSync(path.join(dir, n)).isFile()).sort() : [];
    const media = names.map((name) => {
      const st = statSync(path.join(dir, name));
      return { name, path: where, size: st.size, modified: unixTime(st.mtimeMs), url: link(request, `${where}/${name}`).url };
    });
    return { result: "success", path: where, media, paths: valid, time: unixTime(ctx.now()) };
  });

  app.get<{ Params: { file: string } }>("/v1/assets/:file", async (request) => {
    // Directory segments of the file are stripped (v1 part 4.7).
    const name = path.basename(request.params.file);
    const where = (text(fields(request.query).path) ?? "").trim().replace(/^\/+|\/+$/g, "") || DEFAULT_ASSET_PATH;
    if (!validAssetPaths(options).includes(where)) return v1Failure(`path ${JSON.stringify(where)} is not an asset path: use one of ${validAssetPaths(options).join(", ")}`, ctx.now());
    if (!existsSync(path.join(root, where, name))) return v1Failure(`no file ${JSON.stringify(name)} under ${where}`, ctx.now());
    const { url, expires } = link(request, `${where}/${name}`);
    // The time the link was signed, so expires - time is the validity whichever second the answer is built in.
    return { result: "success", file: name, path: where, url, expires, time: expires - ASSET_LINK_TTL_SECONDS };
  });

  app.get<{ Params: { "*": string }; Querystring: { expires?: string; signature?: string } }>("/asset-files/*", { config: { public: true } }, async (request, reply) => {
    const rel = request.params["*"];
    const { expires, signature } = request.query;
    const parts = rel.split("/");
    if (parts.includes("..") || parts.includes("")) return sendError(request, reply, 403, "the link's path is not an asset path");
    if (!expires || !signature || !/^\d+$/.test(expires)) return sendError(request, reply, 403, "the link lacks its expiry or signature");
    const expected = Buffer.from(sign(rel, Number(expires)), "hex");
    const given = Buffer.from(signature, "hex");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return sendError(request, reply, 403, "the link's signature does not match");
    if (Math.floor(ctx.now() / 1000) > Number(expires)) return sendError(request, reply, 403, "the link has expired; ask GET /v1/assets/{file} for a fresh one");
    const file = path.join(root, ...parts);
    if (!existsSync(file)) return sendError(request, reply, 404, `file ${rel} is gone`);
    return reply.type("application/octet-stream").header("content-disposition", `attachment; filename="${path.basename(file)}"`).send(createReadStream(file));
  });
}
