/**
 * Which URLs belong to the operator console rather than the /v3 API. The
 * API's header auth lets these through (the console checks its own session
 * cookie), and only these get the console's security headers and form bodies.
 *
 * @module
 */

const PREFIXES = ["/sign-in", "/sign-out", "/automations", "/runs", "/logs", "/health", "/assets"];

export function pathOf(url: string): string {
  return url.split("?")[0] ?? url;
}

export function isConsolePath(url: string): boolean {
  const path = pathOf(url);
  return path === "/" || PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));
}
