/**
 * The second half of `npm run build`: bundles the compiled program (dist/src,
 * dist/connectors) into a few chunks in dist/bundle, which dist/src/cli.js loads
 * when it is there. Resolving, reading and linking a few hundred small modules
 * was most of a short run's start-up; a few chunks cost far less (issue 28).
 *
 * Only the program's own modules and zod (plain code, most of the remaining
 * modules) go into the bundle. Other packages stay in node_modules and load as
 * they always did: some find files beside themselves (pino's transports, native
 * add-ons), and a bundler would move them away from those files.
 *
 * Chunks live in one folder, so a module's `import.meta.url` would name a chunk.
 * Each one is rewritten to the URL of the module's own compiled file in dist:
 * the threads, processes and files it names beside itself are found there.
 */

import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";

/** Packages bundled with the program; every other one loads from node_modules. */
const INLINE = new Set(["zod"]);

function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

function placeModules(dist: string, out: string): Plugin {
  return {
    name: "conveyor-places",
    setup(bundler) {
      bundler.onResolve({ filter: /^[^./]/ }, (args) => (INLINE.has(packageName(args.path)) ? undefined : { external: true }));
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
    plugins: [placeModules(dist, out)],
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await bundleProgram(path.resolve(import.meta.dirname, "..", "dist"));
}
