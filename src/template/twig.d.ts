// The part of twig.js (the `twig` package, no types of its own for 3.x) that
// src/template uses: the public factory and the internals its sandbox edits.
declare module "twig" {
  export interface TwigTemplate {
    render(context: Record<string, unknown>): string;
  }

  export interface TwigRawToken {
    type: string;
    value: string;
    position: { start: number; end: number };
  }

  export interface TwigLogicHandler {
    type: string;
    open?: boolean;
    next?: string[];
  }

  export type TwigFilter = (value: unknown, params?: unknown[]) => unknown;

  export interface TwigCore {
    Templates: {
      loaders: Record<string, unknown>;
      registerLoader(name: string, loader: (...args: unknown[]) => unknown): void;
      unRegisterLoader(name: string): void;
    };
    logic: {
      handler: Record<string, TwigLogicHandler>;
      compile(this: unknown, token: TwigRawToken): { type: string };
    };
    expression: {
      compile(this: unknown, token: { type: string; value: string }): unknown;
      resolveAsync(this: unknown, value: unknown, context: unknown, params?: unknown, nextToken?: unknown, object?: unknown): unknown;
    };
    functions: Record<string, (...args: unknown[]) => unknown>;
    filters: Record<string, TwigFilter>;
    token: { type: Record<string, string> };
    tokenize(this: unknown, source: string): TwigRawToken[];
    compile(this: unknown, tokens: TwigRawToken[]): unknown[];
    Markup(content: string, strategy?: string | boolean): unknown;
    output(this: unknown, parts: unknown[]): unknown;
    Error: new (message: string) => Error;
  }

  export interface TwigExports {
    twig(params: { data: string; rethrow?: boolean; autoescape?: boolean; strict_variables?: boolean }): TwigTemplate;
    extend(fn: (core: TwigCore) => void): void;
    cache(on: boolean): void;
    factory(): TwigExports;
  }

  const Twig: TwigExports;
  export default Twig;
}
