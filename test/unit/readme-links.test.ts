import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** README.md and every Markdown file under samples/: the pages a newcomer follows links through. */
function pages(): string[] {
  const found = [path.join(ROOT, "README.md")];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".md")) found.push(full);
    }
  };
  walk(path.join(ROOT, "samples"));
  return found;
}

/** The text outside fenced code blocks and inline code, where `[a](b)` is an example, not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, (code) => " ".repeat(code.length));
}

/** GitHub's anchors: lower case, punctuation dropped, spaces to hyphens, a repeated heading numbered -1, -2. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading = ""] of markdown.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading
      .replace(/`/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

interface Link {
  page: string;
  target: string;
}

function links(page: string): Link[] {
  // Inline code is blanked first, so a link whose text is code (`[`x.json`](x.json)`) is read from the original at the same offset.
  const original = readFileSync(page, "utf8");
  const text = original.replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, " "));
  const found: Link[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) found.push({ page, target: m[1] ?? "" });
  for (const m of prose(original).matchAll(/^\s*\[[^\]]+\]:\s+(\S+)/gm)) found.push({ page, target: m[1] ?? "" });
  return found;
}

/** Why a link does not resolve, or null when it does. */
function broken({ page, target }: Link): string | null {
  if (/^(https?|mailto):/.test(target)) return null;
  const [file = "", anchor] = target.split("#");
  const resolved = file === "" ? page : path.resolve(path.dirname(page), decodeURIComponent(file));
  if (!resolved.startsWith(ROOT)) return `${target} leaves the repository`;
  if (!existsSync(resolved)) return `${target}: no such file`;
  if (anchor === undefined) return null;
  if (!resolved.endsWith(".md")) return `${target}: an anchor into a file that is not Markdown`;
  return anchors(readFileSync(resolved, "utf8")).has(anchor) ? null : `${target}: no heading with the anchor #${anchor}`;
}

describe("links in README.md and samples/", () => {
  it("every relative link names a file that exists, and every anchor a heading it has", () => {
    const all = pages().flatMap(links);
    // The samples table alone links its ten definitions: fewer means the reader missed links.
    expect(all.length).toBeGreaterThan(10);
    const problems = all.flatMap((link) => {
      const why = broken(link);
      return why ? [`${path.relative(ROOT, link.page)}: ${why}`] : [];
    });
    expect(problems).toEqual([]);
  });

  it("reads anchors as GitHub makes them", () => {
    expect([...anchors("# First session\n## A run, stage by stage\n## Daemon API\n## Daemon API\n```sh\n# not a heading\n```\n")]).toEqual([
      "first-session",
      "a-run-stage-by-stage",
      "daemon-api",
      "daemon-api-1",
    ]);
  });

  it("catches a link to a missing file or heading", () => {
    const page = path.join(ROOT, "README.md");
    expect(broken({ page, target: "samples/no-such.json" })).toContain("no such file");
    expect(broken({ page, target: "#no-such-heading" })).toContain("no heading");
    expect(broken({ page, target: "samples/README.md#storage-samples-run-on-a-fresh-machine" })).toBeNull();
  });
});
