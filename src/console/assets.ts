import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";

const TYPES: Record<string, string> = {
  "console.css": "text/css; charset=utf-8",
  "console.js": "text/javascript; charset=utf-8",
  "run-live.js": "text/javascript; charset=utf-8",
};

/**
 * The assets sit next to this file in src/; the build (tsc) copies no
 * non-TypeScript files, so the compiled module in dist/src/console/ reads
 * them from the source tree, three folders up. No build step is needed.
 */
function readAsset(name: string): Buffer {
  const places = [new URL(`./assets/${name}`, import.meta.url), new URL(`../../../src/console/assets/${name}`, import.meta.url)];
  for (const place of places) {
    try {
      return readFileSync(fileURLToPath(place));
    } catch {
      // Try the next place.
    }
  }
  throw new Error(`console asset ${name} not found in ${places.map((p) => fileURLToPath(p)).join(" or ")}`);
}

/** `/assets/console.css` and `/assets/console.js`, read once at start; anything else under /assets is a 404. */
export function registerAssets(app: FastifyInstance): void {
  const files = new Map(Object.keys(TYPES).map((name) => [name, readAsset(name)]));
  app.get("/assets/:name", async (request, reply) => {
    const name = String((request.params as Record<string, unknown>).name);
    const body = files.get(name);
    const type = TYPES[name];
    if (!body || !type) return reply.code(404).type("text/plain; charset=utf-8").send(`no console asset ${name}; assets: ${[...files.keys()].join(", ")}`);
    return reply.type(type).header("Cache-Control", "no-cache").send(body);
  });
}
