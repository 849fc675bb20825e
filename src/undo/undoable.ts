/**
 * Which runs can be undone. A product import changes records the service can
 * set back; an order import sends orders on (to a warehouse, a carrier) and an
 * export delivers a file to someone else's system: neither can be recalled,
 * so they say so instead of pretending.
 *
 * @module
 */

import type { Automation } from "../definition/index.js";

/** Why runs of the automation cannot be undone, or null when they can. */
export function undoRefusal(automation: Pick<Automation, "action" | "type" | "file_configs">): string | null {
  if (automation.action === "export") {
    return "an export delivered its file to another system, and a file delivered cannot be taken back";
  }
  if (automation.type === "orders") {
    return "an order import passes orders on to fulfilment: a shipment sent to a carrier cannot be recalled, so order imports cannot be undone";
  }
  if (automation.file_configs.some((c) => c.bulk_file)) {
    return "a bulk_file import sends its file as it is, without reading the records it changes first, so there are no values before to go back to";
  }
  return null;
}
