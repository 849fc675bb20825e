import { sqlTimeAt } from "./db.js";
import type { ChangeSource, LogStore } from "./log-store.js";
import { IDENTIFIER_FIELDS, type IdentifierField, type Item, type ItemStore } from "./item-store.js";

/** The six item operations of v1 (single form posts and bulk rows alike). */
export const ITEM_ACTIONS = ["start", "add", "edit", "relist", "end", "delete"] as const;
export type ItemAction = (typeof ITEM_ACTIONS)[number];

export function isItemAction(value: string): value is ItemAction {
  return (ITEM_ACTIONS as readonly string[]).includes(value);
}

export function isIdentifierField(value: string): value is IdentifierField {
  return (IDENTIFIER_FIELDS as readonly string[]).includes(value);
}

export interface ItemChange {
  action: ItemAction;
  identifier: IdentifierField;
  value: string;
  /** Fields to set; an empty string resets (removes) the field. */
  fields: Record<string, string>;
}

export type ItemOutcome = { ok: true; item: Item; message: string } | { ok: false; guid: string; message: string };

/**
 * Applies one item change with the row rules of service.md: `start`/`add` on
 * an existing item fail, `edit`/`relist`/`end`/`delete` on a missing one fail.
 * `listed` shows the listing state (`start`/`relist` = 1, `add`/`end` = 0) and
 * `dateupdated` the last change. Every attempt writes a log record.
 */
export function applyItemChange(items: ItemStore, logs: LogStore, change: ItemChange, source: ChangeSource, now: number): ItemOutcome {
  const outcome = decide(items, change, now);
  const guid = outcome.ok ? outcome.item.guid : outcome.guid;
  logs.write({
    source,
    type: "item",
    action: change.action,
    identifier: guid,
    result: outcome.ok ? "success" : "error",
    message: outcome.message,
    fieldData: change.fields,
  });
  return outcome;
}

function decide(items: ItemStore, change: ItemChange, now: number): ItemOutcome {
  const { action, identifier, value } = change;
  const label = `${identifier} ${JSON.stringify(value)}`;
  if (value.trim() === "") return { ok: false, guid: value, message: `the identifier ${identifier} is empty: give the item's ${identifier}` };
  const existing = items.find(identifier, value);
  const stamp = sqlTimeAt(now);

  if (action === "add" || action === "start") {
    if (existing) return { ok: false, guid: existing.guid, message: `cannot ${action}: an item with ${label} already exists (use edit or relist)` };
    if (identifier === "id") return { ok: false, guid: value, message: `cannot ${action} by id: ids are given by the service; identify new items by guid` };
    const record: Record<string, string> = { [identifier]: value };
    merge(record, change.fields);
    const guid = record.guid || value;
    const sku = record.sku || guid;
    if (!record.title) return { ok: false, guid, message: `cannot ${action} ${label}: the title field is required to create an item` };
    if (identifier !== "guid" && items.find("guid", guid)) return { ok: false, guid, message: `cannot ${action}: guid ${JSON.stringify(guid)} already exists` };
    const item = items.insert({ ...record, guid, sku, id: "", listed: action === "start" ? "1" : "0", date: stamp, dateupdated: stamp });
    return { ok: true, item, message: action === "start" ? "item created and listed" : "item created" };
  }

  if (!existing) return { ok: false, guid: identifier === "guid" ? value : "", message: `cannot ${action}: no item with ${label}` };
  if (action === "delete") {
    items.remove(existing.id);
    return { ok: true, item: existing, message: "item deleted" };
  }
  const next: Item = { ...existing };
  const given = { ...change.fields };
  delete given.id;
  if (given.guid !== undefined && given.guid !== existing.guid) {
    return { ok: false, guid: existing.guid, message: `cannot change the guid of ${label}: guid is the item's identity` };
  }
  delete given.guid;
  merge(next, given);
  if (next.sku === undefined || next.sku === "") next.sku = existing.guid;
  if (action === "relist") next.listed = "1";
  if (action === "end") next.listed = "0";
  next.dateupdated = stamp;
  items.update(next, existing);
  const messages: Record<ItemAction, string> = { edit: "item updated", relist: "item relisted", end: "listing ended", add: "", start: "", delete: "" };
  return { ok: true, item: next, message: messages[action] };
}

function merge(record: Record<string, string>, fields: Record<string, string>): void {
  for (const [key, value] of Object.entries(fields)) {
    if (value === "") delete record[key];
    else record[key] = value;
  }
}
