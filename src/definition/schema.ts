import { z } from "zod";
import { crossFieldRules } from "./rules.js";
import { connectionSchema } from "./schema-connection.js";
import { describeValue, flag, isRecord, issueAdder, known, nonEmpty, oneOf, scalar, stringList, text } from "./schema-common.js";
import { fileConfigSchema } from "./schema-file-config.js";

/**
 * The whole definition (automations.md, top level). Shapes are checked field by
 * field; `crossFieldRules` then sees the whole object, also when some fields
 * failed, so one pass reports every problem.
 */

const parameterSchema = known(
  {
    name: nonEmpty.max(255),
    // The seed: "any type, or null". Objects could not be put into a text, so only plain values.
    value: scalar.optional(),
    description: text.optional(),
    encrypted: flag.optional(),
    label: text.optional(),
    type: text.optional(),
    required: flag.optional(),
    hidden_from_user: flag.optional(),
  },
  "a parameter",
);

/** Published automations key parameters by name (seed 2.2); both forms become one array. */
const parametersSchema = z.preprocess(
  (value) => (isRecord(value) ? Object.entries(value).map(([name, p]) => (isRecord(p) ? { name, ...p } : p)) : value),
  z.array(parameterSchema, { error: (iss) => (iss.code === "invalid_type" ? `expected an array of parameters, got ${describeValue(iss.input)}` : undefined) }),
);

export const automationSchema = known(
  {
    name: nonEmpty.max(255),
    vendor: text.max(255).optional(),
    description: text.max(10_000).optional(),
    slug: text
      .max(255)
      .regex(/^[a-z0-9-]+$/, { error: "may only hold lower-case letters, digits and -" })
      .optional(),
    active: flag,
    draft: flag.optional(),
    // Optional only for an automation that runs on `events` (events.ts says so when it is missing otherwise).
    schedule: nonEmpty.optional(),
    /** Our extension: the event types (seed part 6, with or without the service prefix) that also start the automation. */
    events: stringList.optional(),
    timezone: nonEmpty.optional(),
    type: oneOf(["products", "orders", "fitment"]),
    action: oneOf(["import", "export"]),
    connection: connectionSchema.optional(),
    file_configs: z.array(fileConfigSchema, { error: (iss) => (iss.code !== "invalid_type" ? undefined : iss.input === undefined ? "required" : `expected an array of file configs, got ${describeValue(iss.input)}`) }).min(1, { error: "needs at least one file config" }),
    parameters: parametersSchema.optional(),
    metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  },
  "the automation",
).superRefine(
  (value, ctx) => {
    crossFieldRules(value, issueAdder(ctx));
  },
  { when: (payload) => isRecord(payload.value) },
);

export type RawAutomation = z.output<typeof automationSchema>;
