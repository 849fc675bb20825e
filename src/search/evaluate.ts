import { valueContains, valueEquals, valueOrders } from "./compare.js";
import { anyValue, fieldReader, type LeafTest } from "./fields.js";
import { parseSearch } from "./parser.js";
import { usesClock } from "./tree.js";
import { ConveyorError } from "../errors.js";
import type {
  CompileOptions,
  MatchOptions,
  Scalar,
  SearchNode,
  SearchOperator,
  SearchRecord,
  SearchValue,
  TimeSpan,
} from "./types.js";
import { resolveRelative } from "./values.js";

/*
 * A parsed tree is turned once into nested closures: no switch on node types,
 * no string or regular expression built per record. Trees are compiled lazily and
 * remembered per node object, so matchesSearch on the same node stays cheap.
 */

type TermNode = Extract<SearchNode, { type: "term" }>;

/** `nowMs` is only read by terms with a relative date. */
type Predicate = (record: SearchRecord, nowMs: number) => boolean;

const compiled = new WeakMap<SearchNode, Predicate>();

/** Absolute dates are fixed; relative ones are resolved again only when the clock moved. */
function spanSource(value: SearchValue): (nowMs: number) => TimeSpan | null {
  const { date, relative } = value;
  if (!relative) return () => date;
  let lastNow = Number.NaN;
  let span: TimeSpan = { first: 0, last: 0 };
  return (nowMs) => {
    if (nowMs !== lastNow) {
      span = resolveRelative(relative, nowMs);
      lastNow = nowMs;
    }
    return span;
  };
}

function compileMatch(value: SearchValue, op: SearchOperator): (span: TimeSpan | null) => (v: Scalar) => boolean {
  switch (op) {
    case "eq":
    case "ne":
      return (span) => (v) => valueEquals(v, value, span);
    case "contains":
    case "not_contains":
      return () => (v) => valueContains(v, value);
    case "gt":
    case "ge":
    case "lt":
    case "le": {
      const ordering = op;
      return (span) => (v) => valueOrders(v, value, span, ordering);
    }
    default:
      // Only reachable with a hand-built or deserialised node.
      throw new ConveyorError("internal", `unknown search operator "${String(op)}"`, {
        hint: "build nodes with parseSearch; operators are eq, ne, gt, ge, lt, le, contains, not_contains",
      });
  }
}

function compileTerm(term: TermNode): Predicate {
  const read = fieldReader(term.field);
  const { value, op } = term;
  const negated = op === "ne" || op === "not_contains";
  const spanAt = spanSource(value);
  const makeTest = compileMatch(value, op);
  if (!value.relative) {
    const test: LeafTest = makeTest(spanAt(0));
    return negated ? (record) => !read(record, test) : (record) => read(record, test);
  }
  let lastSpan: TimeSpan | null = null;
  let test: LeafTest = () => false;
  return (record, nowMs) => {
    const span = spanAt(nowMs);
    if (span !== lastSpan) {
      test = makeTest(span);
      lastSpan = span;
    }
    const hit = read(record, test);
    return negated ? !hit : hit;
  };
}

function compileNode(node: SearchNode): Predicate {
  const known = compiled.get(node);
  if (known) return known;
  let predicate: Predicate;
  switch (node.type) {
    case "and": {
      const parts = node.nodes.map(compileNode);
      predicate = (record, nowMs) => {
        for (const part of parts) if (!part(record, nowMs)) return false;
        return true;
      };
      break;
    }
    case "or": {
      const parts = node.nodes.map(compileNode);
      predicate = (record, nowMs) => {
        for (const part of parts) if (part(record, nowMs)) return true;
        return false;
      };
      break;
    }
    case "term":
      predicate = compileTerm(node);
      break;
    case "keyword": {
      const test: LeafTest = (v) => valueContains(v, node.value);
      predicate = (record) => anyValue(record, test);
      break;
    }
  }
  compiled.set(node, predicate);
  return predicate;
}

/** Does the record satisfy the parsed expression? Relative dates count from `options.now`. */
export function matchesSearch(node: SearchNode, record: SearchRecord, options: MatchOptions = {}): boolean {
  const nowMs = options.now ? options.now.getTime() : Date.now();
  return compileNode(node)(record, nowMs);
}

/**
 * Parses once and returns a predicate for many records. `options.now` is asked
 * once per record, and only when the expression holds a relative date.
 */
export function compileSearch(text: string, options: CompileOptions = {}): (record: SearchRecord) => boolean {
  const node = parseSearch(text);
  const predicate = compileNode(node);
  if (!usesClock(node)) return (record) => predicate(record, 0);
  const clock = options.now ?? (() => new Date());
  return (record) => predicate(record, clock().getTime());
}
