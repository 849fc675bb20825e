import type { FastifyInstance } from "fastify";
import { registerAssets } from "./assets.js";
import { registerAutomationActions } from "./automation-actions.js";
import { registerAutomationsPage } from "./automations-page.js";
import { sessionOf, type ConsoleContext } from "./context.js";
import { registerHealthPage } from "./health-page.js";
import { page } from "./layout.js";
import { registerLogsPage } from "./logs-page.js";
import { registerRunPages } from "./run-routes.js";
import { registerConsoleHeaders, registerFormBodies } from "./security.js";
import { registerSessionRoutes, requireSession, SessionStore } from "./session-routes.js";
import { automationName } from "../daemon/wiring.js";

export type { ConsoleContext, ConsoleSession } from "./context.js";
export { sessionOf } from "./context.js";
export { page } from "./layout.js";
export { isConsolePath } from "./paths.js";
export { requireSession } from "./session-routes.js";

/**
 * The operator console on the daemon's app, next to /v3 (README "Operator
 * console"). Pages are rendered on the server; routes behind a session use
 * `{ preHandler: requireSession }`, which sets `request.consoleSession =
 * {account, csrf}`. Call before the app listens.
 */
export function registerConsole(app: FastifyInstance, ctx: ConsoleContext): void {
  app.decorate("consoleSessions", new SessionStore(ctx.sessions, ctx.accounts, ctx.settings.consoleSessionMs, ctx.now));
  registerConsoleHeaders(app);
  registerFormBodies(app);
  registerAssets(app);
  registerSessionRoutes(app, ctx, ctx.accounts);
  registerAutomationsPage(app, ctx);
  registerAutomationActions(app, ctx);
  registerLogsPage(app, ctx);
  registerHealthPage(app, ctx);
  // The run page and plan viewer (run-views) in this frame: the session guard, the layout, run-live.js.
  registerRunPages(
    app,
    {
      store: ctx.store,
      dataDir: ctx.settings.dataDir,
      automationName: async (key) => ((await ctx.definitions.byKey(key)) ? automationName(ctx.definitions, key) : null),
      account: (request) => sessionOf(request).account,
      csrf: (request) => sessionOf(request).csrf,
      wrap: (request, title, body) => {
        const { account, csrf } = sessionOf(request);
        return page({ title, account, csrf, active: "runs", body, script: true });
      },
      liveScript: "/assets/run-live.js",
    },
    requireSession,
  );
}
