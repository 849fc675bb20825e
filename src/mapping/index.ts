/**
 * Record transformations between a read source row and a planned change
 * (import), or between a service record and an output row (export).
 */
export type { ActionRuleConfig, FieldRef, FieldSource, MapResult, MappedRecord, MappingConfig, RowErrorInfo, RowGetter, RowLike, SkipInfo } from "./types.js";
export { NONE_IGNORED, RowFailure, isBlank, newRecord } from "./types.js";
export { bindFieldMap, type BoundFieldMap } from "./header.js";
export { compileTemplate, templateNames, type Template } from "./template.js";
export { compileValueDefaults, compileValueMap, type ValueDefaults, type ValueMap } from "./value-map.js";
export { compileExpression, formatNumber, roundTo, type CompiledExpression } from "./calculate.js";
export { ACTION_FUNCTIONS, canonicalFunction } from "./action-functions.js";
export { actionWrites, compileActions, type CompiledActions } from "./actions.js";
export { createImportMapper, mappedFields, type ImportMapper, type ImportMapperOptions, type ServiceActionResult } from "./mapper.js";
export { createExportMapper, type ExportMapper, type ExportMapperOptions, type ExportResult } from "./export-mapper.js";
export { ADDRESS_FIELDS, ORDER_STATUSES, OrderGrouper, PAYMENT_STATUSES, SHIPPING_STATUSES, checkOrderFields, checkOrderValues, type OrderDraft, type ShipmentDraft } from "./orders.js";
export { IdentifierSet, ADDED, REPEATED, NOT_KEPT, type AddResult } from "./dedupe.js";
