/**
 * The automation model (automations.md): parse a definition into a typed,
 * normalized automation, resolve its parameters and tokens for a run, mask it
 * for display. Other parts import from here only.
 */
export type {
  Automation,
  FileConfig,
  Connection,
  ConnectionType,
  Parameter,
  ActionRule,
  ActionFunction,
  ActionFunctionName,
  AfterImport,
  ChangeLimits,
  FieldChangeLimit,
  DeferredField,
  FieldSource,
  FileFormat,
  Limit,
  Problem,
  Scalar,
} from "./types.js";
export { ACTION_FUNCTIONS, EXPORT_FORMATS, IMPORT_FORMATS } from "./types.js";
export { parseAutomation, loadAutomationFile } from "./parse.js";
export { MAX_DEFINITION_BYTES } from "./limits.js";
export { clearCredentials, definitionWarnings } from "./warnings.js";
export { failureEnvelope, describeProblem, formatPath } from "./problems.js";
export { resolveAutomation, type ResolveContext } from "./resolve.js";
export { maskAutomation } from "./mask.js";
export { renderTokens, findPlaceholders, RUN_TOKENS, type TokenContext } from "./placeholders.js";
export { compileNamePattern, parseLimit, slugify } from "./checks.js";
export { checkCron } from "./cron.js";
export { pathProblem } from "./path-rules.js";
export { loadSecretKey, encryptValue, decryptValue, isEncrypted } from "./crypto.js";
