import { SaxesParser, type SaxesTagPlain } from "saxes";
import { ConveyorError } from "../errors.js";
import { RowBatches } from "./batches.js";
import { addColumns, offsetsNotFixed, resolveColumn } from "./columns.js";
import { XmlRecord, compileXPath, escapeXmlAttr, escapeXmlText } from "./xml-record.js";
import type { Accessor, FieldRef, RecordReader, SourceRow } from "./types.js";

export interface XmlReaderOptions {
  /** `/feed/item`, or `//item` for item elements at any depth; default the children of the root element. */
  root?: string;
  xpath?: boolean;
  /** The file's first characters, quoted when `root` is not in it (often a server's error answer). */
  preview?: string;
}

const SAMPLE = 50;

interface ChildFrame {
  name: string;
  text: string;
  nested: string;
  hasChildren: boolean;
}

function localName(name: string): string {
  const colon = name.indexOf(":");
  return colon < 0 ? name : name.slice(colon + 1);
}

function parseXmlRoot(root: string | undefined): { anyDepth: boolean; path: string[] } | null {
  const trimmed = root?.trim();
  if (!trimmed) return null;
  if (trimmed.startsWith("//")) return { anyDepth: true, path: [trimmed.slice(2)] };
  const path = trimmed.replace(/^\//, "").split("/");
  if (path.some((p) => !/^[^\s/[\]()@*]+$/.test(p))) {
    throw new ConveyorError("definition_invalid", `root ${JSON.stringify(root)} is not an element path such as /feed/item or //item`, {
      details: { field: "root" },
    });
  }
  return { anyDepth: false, path };
}

const segmentMatches = (segment: string, name: string): boolean => segment === name || segment === localName(name);

/**
 * Cuts records out of an XML stream (saxes): with `xpath` each record becomes its own small
 * document (namespace declarations of its ancestors copied in) for XPath; without, a flat object
 * of child element texts and `@attribute`s. Memory is one record whatever the file size.
 */

/** Whether the element that holds the records was seen: false means `root` names a path the file does not have. */
interface CutState {
  containerSeen: boolean;
}

function cutRecords(parser: SaxesParser, options: XmlReaderOptions, emit: (row: SourceRow) => void, state: CutState): void {
  const root = parseXmlRoot(options.root);
  const outer: string[] = [];
  const nsStack: Array<Record<string, string>> = [{}];
  let number = 0;
  let depthInRecord = 0;
  let xml: string[] = [];
  let fields: Record<string, string> = {};
  let frames: ChildFrame[] = [];
  let recordNs: Record<string, string> = {};

  const isRecordStart = (name: string): boolean => {
    if (!root) return outer.length === 1;
    if (root.anyDepth) return segmentMatches(root.path[0] ?? "", name);
    if (outer.length !== root.path.length - 1) return false;
    return root.path.every((seg, i) => segmentMatches(seg, i === outer.length ? name : (outer[i] ?? "")));
  };

  const isContainer = (): boolean => {
    if (!root || root.anyDepth) return true;
    if (outer.length !== root.path.length - 1) return false;
    return outer.every((name, i) => segmentMatches(root.path[i] ?? "", name));
  };

  parser.on("opentag", (tag: SaxesTagPlain) => {
    const attrs = tag.attributes as Record<string, string>;
    if (depthInRecord === 0) {
      if (!isRecordStart(tag.name)) {
        outer.push(tag.name);
        if (isContainer()) state.containerSeen = true;
        const inherited = nsStack[nsStack.length - 1] ?? {};
        const own = Object.entries(attrs).filter(([k]) => k === "xmlns" || k.startsWith("xmlns:"));
        nsStack.push(own.length ? { ...inherited, ...Object.fromEntries(own) } : inherited);
        return;
      }
      depthInRecord = 1;
      number++;
      state.containerSeen = true;
      const inherited = nsStack[nsStack.length - 1] ?? {};
      if (options.xpath) {
        const decls = { ...inherited, ...Object.fromEntries(Object.entries(attrs).filter(([k]) => k === "xmlns" || k.startsWith("xmlns:"))) };
        recordNs = {};
        for (const [k, v] of Object.entries(decls)) if (k.startsWith("xmlns:")) recordNs[k.slice(6)] = v;
        xml = [`<${tag.name}`];
        for (const [k, v] of Object.entries({ ...decls, ...attrs })) xml.push(` ${k}="${escapeXmlAttr(v)}"`);
        xml.push(">");
      } else {
        fields = {};
        frames = [];
        for (const [k, v] of Object.entries(attrs)) if (k !== "xmlns" && !k.startsWith("xmlns:")) fields[`@${k}`] = v;
      }
      return;
    }
    depthInRecord++;
    if (options.xpath) {
      xml.push(`<${tag.name}`);
      for (const [k, v] of Object.entries(attrs)) xml.push(` ${k}="${escapeXmlAttr(v)}"`);
      xml.push(">");
    } else {
      const parent = frames[frames.length - 1];
      if (parent) parent.hasChildren = true;
      frames.push({ name: tag.name, text: "", nested: "", hasChildren: false });
    }
  });

  const onText = (text: string): void => {
    if (depthInRecord === 0) return;
    if (options.xpath) xml.push(escapeXmlText(text));
    else {
      const top = frames[frames.length - 1];
      if (top) top.text += text;
    }
  };
  parser.on("text", onText);
  parser.on("cdata", onText);

  parser.on("closetag", (tag: SaxesTagPlain) => {
    if (depthInRecord === 0) {
      outer.pop();
      nsStack.pop();
      return;
    }
    depthInRecord--;
    if (options.xpath) {
      xml.push(`</${tag.name}>`);
      if (depthInRecord === 0) emit({ line: number, raw: new XmlRecord(xml.join(""), recordNs) });
      return;
    }
    if (depthInRecord === 0) {
      emit({ line: number, raw: fields });
      return;
    }
    const frame = frames.pop();
    if (!frame) return;
    // Leaf text is kept verbatim; an element with children gets its leaves' texts, not the indentation between them.
    const value = frame.hasChildren ? frame.nested : frame.text;
    const parent = frames[frames.length - 1];
    if (parent) parent.nested += value;
    else fields[frame.name] = frame.name in fields ? `${fields[frame.name]},${value}` : value;
  });
}

export async function openXmlReader(
  text: AsyncIterable<string>,
  options: XmlReaderOptions,
  onClose: () => Promise<void> = async () => {},
): Promise<RecordReader> {
  async function* parse(): AsyncGenerator<SourceRow[]> {
    const parser = new SaxesParser({ xmlns: false, position: true });
    let pending: SourceRow[] = [];
    let failure: Error | null = null;
    parser.on("error", (err: Error) => {
      failure ??= err;
    });
    const state: CutState = { containerSeen: false };
    cutRecords(parser, options, (row) => pending.push(row), state);
    const check = (): void => {
      if (failure) throw new ConveyorError("file_format", `The XML file is not well-formed: ${failure.message}`, { cause: failure });
    };
    for await (const chunk of text) {
      parser.write(chunk);
      check();
      if (pending.length) {
        const out = pending;
        pending = [];
        yield out;
      }
    }
    parser.close();
    check();
    if (pending.length) yield pending;
    if (!state.containerSeen && options.root) {
      throw new ConveyorError("file_format", `The XML file has nothing at root ${JSON.stringify(options.root)}${options.preview ? `: it begins ${options.preview}` : ""}`, {
        details: { field: "root" },
        hint: "When that is an error answer of the server (a wrong key, an expired login), check the connection; otherwise set root to the path of the record elements, such as /feed/item.",
      });
    }
  }
  const batches = new RowBatches(parse());
  const sample = (await batches.head(SAMPLE)).slice(0, SAMPLE);
  // No record at all (an empty list: no orders today): nothing to check the field_map against.
  const empty = sample.length === 0;
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of sample) {
    if (row.raw instanceof XmlRecord) {
      const el = row.raw.node() as { attributes?: ArrayLike<{ name: string }>; childNodes?: ArrayLike<{ nodeType: number; nodeName: string }> };
      addColumns(columns, seen, Array.from(el.childNodes ?? []).filter((n) => n.nodeType === 1).map((n) => n.nodeName));
      addColumns(columns, seen, Array.from(el.attributes ?? []).map((a) => `@${a.name}`).filter((n) => !n.startsWith("@xmlns")));
    } else if (row.raw && typeof row.raw === "object") addColumns(columns, seen, Object.keys(row.raw));
  }
  return {
    format: "xml",
    bulkFile: false,
    columns: async () => (empty ? null : columns),
    accessor: (ref: FieldRef): Accessor | null => {
      if (Array.isArray(ref)) throw offsetsNotFixed(ref);
      if (options.xpath) {
        const get = compileXPath(ref);
        const apply = (row: SourceRow): string | undefined => (row.raw instanceof XmlRecord ? get(row.raw) : undefined);
        if (sample.length && !sample.some((row) => apply(row) !== undefined)) return null;
        return apply;
      }
      const index = empty ? null : resolveColumn(columns, ref);
      if (index === null && !empty) return null;
      const key = index === null ? ref : (columns[index] ?? ref);
      return (row) => (row.raw as Record<string, string>)[key];
    },
    batches: (signal) => batches.batches(signal),
    close: async () => {
      await batches.close();
      await onClose();
    },
  };
}
