/**
 * The second half of `npm run build`: bundles the compiled program (dist/src,
 * dist/connectors) into a few chunks in dist/bundle, which dist/src/cli.js loads
 * when it is there. Resolving, reading and linking a few hundred small modules
 * was most of a short run's start-up; a few chunks cost far less (issue 28).
 *
 * The program's own modules go into the bundle, with the packages every run
 * loads that are plain code: zod, commander, and Fastify with its plugins and
 * what they require (the embedded service). Other packages stay in
 * node_modules and load as they always did: native add-ons, and libraries that
 * find files beside themselves, which a bundler would move away from them.
 * Their `require` calls from bundled code go through a `require` of the
 * bundle's own (the banner).
 *
 * Chunks live in one folder, so a module's `import.meta.url` would name a chunk.
 * Each one is rewritten to the URL of the module's own compiled file in dist:
 * the threads, processes and files it names beside itself are found there.
 */

import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";

/** Packages the program's modules import that are bundled with it, with what they require in turn. */
const INLINE = new Set(["zod", "commander", "fastify", "@fastify/multipart", "@fastify/formbody"]);
/** Required by a bundled package, and still loaded from node_modules: a native add-on, or files found beside it (pino's transport thread). */
const NEVER = new Set(["better-sqlite3", "pg", "pg-native", "ssh2", "cpu-features", "thread-stream"]);

/** Opens each chunk: bundled CommonJS code requires Node's modules and the packages left out by name. */
export const BANNER = 'import { createRequire as __conveyorRequire } from "node:module"; const require = __conveyorRequire(import.meta.url);';

function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

function placeModules(dist: string, out: string): Plugin {
  return {
    name: "conveyor-places",
    setup(bundler) {
      bundler.onResolve({ filter: /^[^./]/ }, (args) => {
        const name = packageName(args.path);
        if (args.path.startsWith("node:") || NEVER.has(name)) return { external: true };
        const fromPackage = args.importer.includes(`${path.sep}node_modules${path.sep}`);
        return INLINE.has(name) || fromPackage ? undefined : { external: true };
      });
      bundler.onLoad({ filter: /\.js$/ }, async (args) => {
        if (!args.path.startsWith(dist + path.sep)) return undefined;
        const own = path.relative(out, args.path).split(path.sep).join("/");
        const text = await readFile(args.path, "utf8");
        return { contents: text.replaceAll("import.meta.url", `new URL(${JSON.stringify(own)}, import.meta.url).href`), loader: "js" };
      });
    },
  };
}

/** Bundles `<dist>/src/main.js` and what it imports into `<dist>/bundle`, replacing what was there. */
export async function bundleProgram(dist: string): Promise<void> {
  const out = path.join(dist, "bundle");
  await rm(out, { recursive: true, force: true });
  await build({
    entryPoints: { main: path.join(dist, "src", "main.js") },
    outdir: out,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    logLevel: "warning",
    banner: { js: BANNER },
    plugins: [placeModules(dist, out)],
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await bundleProgram(path.resolve(import.meta.dirname, "..", "dist"));
}
