import { FileSink } from "./sink.js";
import { escapeXmlText } from "./xml-record.js";
import type { RecordWriter } from "./types.js";

/** Characters XML 1.0 cannot carry at all, even escaped. */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Column names become element names: invalid characters → `_`, a name that cannot start one gets `_` in front. */
export function elementName(name: string): string {
  let out = name.trim().replace(/[^\p{L}\p{N}_.-]/gu, "_");
  if (!/^[\p{L}_]/u.test(out) || /^xml/i.test(out)) out = `_${out}`;
  return out;
}

/** `records`, `records/record` or `/records/record`: the root element and the record element. */
export function xmlNames(root: string | undefined): { root: string; record: string } {
  const parts = (root ?? "").split("/").filter((p) => p.trim() !== "");
  return { root: elementName(parts[0] ?? "records"), record: elementName(parts[1] ?? "record") };
}

export async function openXmlWriter(localPath: string, columns: string[], root: string | undefined): Promise<RecordWriter> {
  const sink = await FileSink.open(localPath);
  const names = xmlNames(root);
  const used = new Set<string>();
  const elements = columns.map((c) => {
    const base = elementName(c);
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    used.add(name);
    return name;
  });
  await sink.write(`<?xml version="1.0" encoding="UTF-8"?>\n<${names.root}>\n`);
  let rows = 0;
  return {
    write: async (record) => {
      rows++;
      const parts = [`  <${names.record}>`];
      columns.forEach((c, i) => {
        const el = elements[i] ?? "_";
        parts.push(`<${el}>${escapeXmlText((record[c] ?? "").replace(NOT_XML, ""))}</${el}>`);
      });
      parts.push(`</${names.record}>\n`);
      await sink.write(parts.join(""));
    },
    close: async () => {
      await sink.write(`</${names.root}>\n`);
      return { rows, bytes: await sink.close() };
    },
  };
}
