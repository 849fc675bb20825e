import { connectorSpec, type Capability } from "../../connectors/index.js";
import { moveFolder } from "./path-rules.js";
import { isRecord, type Add } from "./schema-common.js";

// What the automation asks of its connection, against what the connection type's spec says it can do:
// refused when the definition is checked, not by the connector halfway through a run.

const DIRECTION_NEEDS: Record<string, readonly Capability[]> = { import: ["list", "download"], export: ["upload"] };

function afterImportNeeds(afterImport: unknown): Capability | null {
  if (afterImport === "delete") return "delete";
  return moveFolder(afterImport) !== undefined ? "move" : null;
}

/** Adds a problem, at the field that asks for it, for each thing the connection type cannot do. */
export function capabilityRules(top: Record<string, unknown>, add: Add): void {
  if (!isRecord(top.connection)) return;
  const spec = connectorSpec(top.connection.type);
  if (!spec) return;
  const can = (c: Capability): boolean => spec.capabilities.includes(c);
  const cannot = (c: Capability): string => `the ${spec.label} connector cannot ${c}`;
  const action = typeof top.action === "string" && Object.hasOwn(DIRECTION_NEEDS, top.action) ? top.action : "";
  for (const need of DIRECTION_NEEDS[action] ?? []) {
    if (!can(need)) add(["connection", "type"], `${cannot(need)}, which an ${action} needs`);
  }
  if (top.action !== "import" || !Array.isArray(top.file_configs)) return;
  const allowed = ["keep", ...(can("delete") ? ["delete"] : []), ...(can("move") ? ["move:<folder>"] : [])].join(", ");
  top.file_configs.forEach((fc: unknown, i) => {
    const need = isRecord(fc) ? afterImportNeeds(fc.after_import) : null;
    if (need && !can(need)) add(["file_configs", i, "after_import"], cannot(need), allowed);
  });
}
