/**
 * An export run (runs.md, "Export run"): one pass per file config, each its
 * own file and delivery. A debug run opens no connection at all: nothing is
 * uploaded, posted or mailed, and the rendered files go to the debug folder.
 *
 * Counts: `rows` are the rows selected (one per product, order, order line or
 * vehicle entry); `create` the rows that go out as new, `update` the changed
 * ones (diff runs; a full run counts every row it sends as `create`),
 * `unchanged` those a diff run leaves out, `failed` the records an http
 * partner refused. The outcome is `nothing` when no pass had anything to send
 * and no row failed to map, so the decision in run.ts holds for exports too.
 *
 * @module
 */

import { createConnector } from "../../../connectors/index.js";
import type { Connector } from "../../../connectors/types.js";
import { definitionWarnings } from "../../definition/index.js";
import { ConveyorError } from "../../errors.js";
import { runExportPass } from "./pass.js";
import { LogWriter } from "../logs.js";
import { connectorContext } from "../connector-context.js";
import type { PassOutcome, RunContext } from "../run-context.js";

export async function runExport(ctx: RunContext): Promise<PassOutcome> {
  const { automation, options, recorder } = ctx;
  const connection = automation.connection;
  if (!connection) {
    throw new ConveyorError("definition_invalid", "an export needs a connection to deliver its file", {
      details: { field: "connection" },
      hint: "Add a connection (ftp, ftps, sftp, sdsftp, sds3, http or email).",
    });
  }
  for (const w of definitionWarnings(automation)) ctx.env.logger.warn({ run_id: recorder.record.id, automation: options.key, field: w.path }, w.allowed ? `${w.message}; use ${w.allowed}` : w.message);
  const live = options.mode === "prod";
  let connector: Connector | null = null;
  if (live) {
    connector = createConnector(connection, await connectorContext(ctx.env, options, ctx.now));
  }
  const logs = live
    ? new LogWriter(ctx.env.store, {
        runId: recorder.record.id,
        account: ctx.env.account,
        integration: ctx.env.settings.integration,
        operation: "export",
        type: automation.type === "orders" ? "order" : "item",
      })
    : null;
  let output = false;
  try {
    for (const [index, config] of automation.file_configs.entries()) {
      const pass = await runExportPass({ ctx, config, index, connector, logs });
      if (pass.output) output = true;
    }
  } finally {
    recorder.noteConnection(connector?.facts?.() ?? {});
    await logs?.flush();
    await connector?.close().catch(() => undefined);
  }
  return { guard: null, nothing: !output && recorder.counts.row_errors === 0, applyError: null };
}
