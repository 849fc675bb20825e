// What the renderer and its process say to each other, in a file of its own
// so that neither imports the other.

import type { StreamParts } from "./stream.js";

export interface RenderSetup {
  source: string;
  /** Set when the template streams (a top-level loop over data). */
  parts: StreamParts | null;
  timezone: string;
  /** The run's clock, frozen: `"now"|date` gives the same instant in every render of a run. */
  nowMs: number;
  params: Record<string, string>;
  maxOutputChars: number;
}

export type RenderRequest =
  | { op: "whole"; data: unknown[] }
  | { op: "each"; records: unknown[] }
  | { op: "head" }
  | { op: "tail" }
  | { op: "body"; records: unknown[]; first: number; last: boolean };

export type RenderReply = { ok: true; texts: string[] } | { ok: false; message: string };
