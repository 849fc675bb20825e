import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/**
 * A CommonJS package loaded the first time it is used, synchronously. For a
 * package that code on every run's path imports but only some feeds need
 * (the XML parser, XPath, twig.js): loading it at start-up cost a short run
 * more than using it does. The type comes from an `import type` of the
 * package.
 */
export function lazyRequire<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(id) as T);
}
