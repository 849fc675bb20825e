import { Readable } from "node:stream";
import Assembler from "stream-json/Assembler.js";
import StreamJson from "stream-json";
import { ConveyorError } from "../errors.js";
import { RowBatches } from "./batches.js";
import { addColumns, offsetsNotFixed, resolveColumn } from "./columns.js";
import { compileJsonPath, jsonText, parseRoot } from "./json-values.js";
import { PushQueue } from "./queue.js";
import type { Accessor, FieldRef, RecordReader, SourceRow } from "./types.js";

export interface JsonReaderOptions {
  root?: string;
  jsonpath?: boolean;
  /** One record per top-level value (JSON Lines). */
  lines?: boolean;
  /** The file's first characters, quoted when `root` is not in it (often a server's error answer). */
  preview?: string;
}

interface Token {
  name: string;
  value?: string;
}

interface Frame {
  array: boolean;
  /** The key this container sits under in its parent object. */
  name: string | null;
  key: string | null;
  /** Elements started so far (arrays). */
  count: number;
  records: boolean;
  /** Default root: an array one level down, waiting for its first element to show it holds objects. */
  candidate: boolean;
}

/** How many records the columns (and the header check) look at: JSON records may omit null fields. */
const SAMPLE = 50;

const VALUE_START = new Set(["startObject", "startArray", "stringValue", "numberValue", "nullValue", "trueValue", "falseValue"]);

/** Follows the token stream and assembles each record at `root` on its own: memory is one record. */
class RecordCutter {
  private readonly frames: Frame[] = [];
  private assembler: Assembler | null = null;
  private number = 0;
  private chosen: string | null = null;
  private sawArray = false;
  private rootSeen = false;
  private readonly root: Array<string | number> | null;

  constructor(
    private readonly rootText: string | undefined,
    private readonly lines: boolean,
    private readonly emit: (row: SourceRow) => void,
    private readonly preview = "",
  ) {
    this.root = rootText === undefined || rootText.trim() === "" ? null : parseRoot(rootText);
  }

  token(t: Token): void {
    if (this.assembler) {
      this.assembler.consume(t);
      if (this.assembler.done) this.finish();
      return;
    }
    if (VALUE_START.has(t.name)) this.valueStart(t);
    else if (t.name === "keyValue") {
      const top = this.frames[this.frames.length - 1];
      if (top) top.key = t.value ?? "";
    } else if (t.name === "endObject" || t.name === "endArray") this.frames.pop();
  }

  private valueStart(t: Token): void {
    const parent = this.frames[this.frames.length - 1];
    if (parent?.array) parent.count++;
    if (parent?.candidate) {
      parent.candidate = false;
      if (t.name === "startObject") this.choose(parent);
    }
    if (this.isRecord(parent, t)) {
      this.rootSeen = true;
      this.number++;
      this.assembler = new Assembler({ numberAsString: true } as Assembler.AssemblerOptions);
      this.assembler.consume(t);
      if (this.assembler.done) this.finish();
      return;
    }
    if (t.name !== "startObject" && t.name !== "startArray") return;
    const frame: Frame = { array: t.name === "startArray", name: parent && !parent.array ? parent.key : null, key: null, count: 0, records: false, candidate: false };
    const depth = this.frames.length;
    if (this.root ? this.matchesRoot() : false) {
      this.rootSeen = true;
      frame.records = frame.array;
    }
    else if (!this.root && !this.lines && frame.array) {
      this.sawArray = true;
      if (depth === 0) frame.records = true;
      else if (depth === 1 && !this.frames[0]?.array) frame.candidate = true;
    }
    this.frames.push(frame);
  }

  private isRecord(parent: Frame | undefined, t: Token): boolean {
    if (this.lines) return this.frames.length === 0;
    if (parent?.records) return true;
    // A root that points at one object makes that object the only record.
    return this.root !== null && t.name === "startObject" && this.matchesRoot();
  }

  private matchesRoot(): boolean {
    const root = this.root;
    if (!root || root.length !== this.frames.length) return false;
    return this.frames.every((f, i) => (f.array ? f.count - 1 === root[i] : f.key === root[i]));
  }

  private choose(frame: Frame): void {
    const key = frame.name ?? "";
    if (this.chosen !== null) {
      throw new ConveyorError(
        "file_format",
        `The JSON file has several arrays of records ("${this.chosen}" and "${key}"): set root to say which one holds them`,
        { details: { arrays: [this.chosen, key] }, hint: `For example root: "$.${this.chosen}".` },
      );
    }
    this.chosen = key;
    frame.records = true;
  }

  private finish(): void {
    const record: unknown = this.assembler?.current;
    this.assembler = null;
    this.emit({ line: this.number, raw: record });
  }

  end(): void {
    if (this.assembler) throw new ConveyorError("file_format", "The JSON file ends in the middle of a record");
    if (this.root && !this.rootSeen) {
      throw new ConveyorError("file_format", `The JSON file has nothing at root ${JSON.stringify(this.rootText)}${this.preview ? `: it begins ${this.preview}` : ""}`, {
        details: { field: "root" },
        hint: "When that is an error answer of the server (a wrong key, an expired login), check the connection; otherwise set root to where the records are, such as $.data.items.",
      });
    }
    if (!this.root && !this.lines && !this.sawArray && this.number === 0) {
      throw new ConveyorError("file_format", "The JSON file holds no array of records", {
        hint: "Set root to the JSONPath of the records array, such as $.data.items.",
      });
    }
  }
}

export async function openJsonReader(
  text: AsyncIterable<string>,
  options: JsonReaderOptions,
  onClose: () => Promise<void> = async () => {},
): Promise<RecordReader> {
  const source = Readable.from(text, { objectMode: false });
  const tokens = StreamJson.parser({ streamValues: false, jsonStreaming: options.lines === true });
  const queue = new PushQueue<SourceRow>(2000, () => tokens.pause(), () => tokens.resume());
  const cutter = new RecordCutter(options.root, options.lines === true, (row) => queue.push(row), options.preview);
  tokens.on("data", (t: Token) => {
    try {
      cutter.token(t);
    } catch (err) {
      queue.fail(err);
      source.destroy();
    }
  });
  tokens.on("end", () => {
    try {
      cutter.end();
      queue.end();
    } catch (err) {
      queue.fail(err);
    }
  });
  tokens.on("error", (err: Error) =>
    queue.fail(new ConveyorError("file_format", `The JSON file is not valid JSON: ${err.message}`, { cause: err })),
  );
  source.on("error", (err) => queue.fail(err));
  source.pipe(tokens);

  async function* rowsOf(): AsyncGenerator<SourceRow[]> {
    try {
      yield* queue.batches();
    } finally {
      source.destroy();
      tokens.destroy();
    }
  }
  const batches = new RowBatches(rowsOf());
  const sample = await batches.head(SAMPLE);
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of sample.slice(0, SAMPLE)) {
    if (row.raw !== null && typeof row.raw === "object" && !Array.isArray(row.raw)) addColumns(columns, seen, Object.keys(row.raw));
  }
  // No record at all (an empty array: no orders today): nothing to check the field_map against.
  const empty = sample.length === 0;
  return {
    format: "json",
    bulkFile: false,
    columns: async () => (empty ? null : columns),
    accessor: (ref: FieldRef): Accessor | null => {
      if (Array.isArray(ref)) throw offsetsNotFixed(ref);
      if (options.jsonpath) {
        const get = compileJsonPath(ref);
        // A path that finds nothing in any sampled record is a renamed or mistyped field.
        if (sample.length && !sample.slice(0, SAMPLE).some((row) => get(row.raw) !== undefined)) return null;
        return (row) => get(row.raw);
      }
      const index = empty ? null : resolveColumn(columns, ref);
      if (index === null && !empty) return null;
      const key = index === null ? ref : (columns[index] ?? ref);
      return (row) => {
        const raw = row.raw;
        return raw !== null && typeof raw === "object" ? jsonText((raw as Record<string, unknown>)[key]) : undefined;
      };
    },
    batches: (signal) => batches.batches(signal),
    close: async () => {
      await batches.close();
      await onClose();
    },
  };
}
