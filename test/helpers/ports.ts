import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { connect, createServer, type AddressInfo } from "node:net";

/** A port free on loopback now, for a server or process that must be told its address before it starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Waits until a server on `port` greets with a line beginning `prefix` (`220` for FTP, `SSH-` for SSH). */
export async function waitForGreeting(port: number, prefix: string, what: string, deadline: number, output: () => string): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("data", (d) => {
        socket.destroy();
        resolve(d.toString().startsWith(prefix));
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${what} did not answer on port ${port}: ${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Stops a server process started by a test (SIGTERM, then waits for it) and removes its folder. */
export async function stopServer(child: ChildProcess | undefined, dir: string | undefined): Promise<void> {
  if (child && child.exitCode === null) {
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    await exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
}
