import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startTestDaemon, type TestDaemon } from "../daemon/daemon-harness.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * A test daemon whose automations folder is a copy of the repo's samples/:
 * the daemon loads their definitions, seeds products.csv into the embedded
 * service and copies samples/storage into the account's storage, as on a
 * fresh `npm start`. The copy keeps the repo's folder untouched.
 */
export async function startSampleDaemon(): Promise<TestDaemon & { samples: string }> {
  const samples = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-console-")), "samples");
  cpSync(path.join(ROOT, "samples"), samples, { recursive: true, preserveTimestamps: true });
  // The fixed-width sample fires every 30 minutes: a fire during a test would apply the feed before the test's own run does.
  const fixedWidth = path.join(samples, "fixed-width-storage.json");
  const parsed = JSON.parse(readFileSync(fixedWidth, "utf8")) as Record<string, unknown>;
  writeFileSync(fixedWidth, JSON.stringify({ ...parsed, schedule: "0 3 1 1 *" }, null, 2));
  const t = await startTestDaemon({ env: { CONVEYOR_AUTOMATIONS: samples, CONVEYOR_ALLOW_PRIVATE_HOSTS: "1" } });
  return Object.assign(t, { samples });
}

export interface AutomationRef {
  kind: "custom" | "installed";
  id: number;
  name: string;
}

/** The account's custom automations as the API lists them. */
export async function customAutomations(t: TestDaemon, headers = t.headers): Promise<AutomationRef[]> {
  const res = await t.request("GET", "/v3/automations/custom", undefined, headers);
  const list = (res.body.automations ?? []) as Array<{ id: number | string; name: string }>;
  return list.map((a) => ({ kind: "custom", id: Number(a.id), name: a.name }));
}

/** The automation whose name starts with `prefix`, or an error that lists what there is. */
export async function automationNamed(t: TestDaemon, prefix: string): Promise<AutomationRef> {
  const all = await customAutomations(t);
  const found = all.find((a) => a.name.startsWith(prefix));
  if (!found) throw new Error(`no automation named ${prefix}…; there are ${all.map((a) => a.name).join(" | ")}`);
  return found;
}
