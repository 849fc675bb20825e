import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";

const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * Starts `conveyor daemon` on the data folder `data` (no automations, free
 * ports, the embedded service), returns what it printed on stderr up to
 * "Embedded service on", then stops it.
 */
export async function daemonBanner(data: string, env: Record<string, string> = {}, args: string[] = []): Promise<string> {
  const merged: Record<string, string> = { ...(process.env as Record<string, string>), CONVEYOR_DATA_DIR: data, CONVEYOR_AUTOMATIONS: "", CONVEYOR_LISTEN: "127.0.0.1:0", CONVEYOR_SERVICE_LISTEN: "127.0.0.1:0" };
  for (const key of ["CONVEYOR_DATABASE_URL", "CONVEYOR_SERVICE_URL", "CONVEYOR_API_USER", "CONVEYOR_API_TOKEN"]) delete merged[key];
  Object.assign(merged, env);
  const proc = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "daemon", "--grace", "1", ...args], { cwd: ROOT, env: merged, stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise<void>((resolve) => proc.on("exit", () => resolve()));
  try {
    return await new Promise<string>((resolve, reject) => {
      let err = "";
      createInterface({ input: proc.stderr }).on("line", (line) => {
        err += `${line}\n`;
        if (line.startsWith("Embedded service on")) resolve(err);
      });
      void exited.then(() => reject(new Error(`the daemon exited before its banner:\n${err}`)));
    });
  } finally {
    proc.kill("SIGTERM");
    await exited;
  }
}
