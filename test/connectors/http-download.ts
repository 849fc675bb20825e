import { readFileSync } from "node:fs";
import path from "node:path";
import type { HttpConnector } from "../../connectors/http.js";

/** Lists an http connection's one feed and downloads it into `dir`: its text, as the import would read it. */
export async function downloadText(c: HttpConnector, dir: string): Promise<string> {
  const [file] = await c.list();
  if (!file) throw new Error("no file listed");
  const local = path.join(dir, `out-${Math.random()}`);
  await c.download(file, local);
  return readFileSync(local, "utf8");
}
