#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node
/**
 * The `conveyor` command's entry point: it makes sure a supported Node.js runs
 * the program before loading it (see runtime.ts), then loads main.ts. Only
 * modules that import nothing but Node's built-ins are imported statically
 * here: the program's modules load native add-ons built for the supported
 * runtime. The shebang line sets memory.ts's MALLOC_ENV, which glibc reads
 * only as the process starts.
 */

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import module from "node:module";
import { MALLOC_ENV } from "./memory.js";
import { chooseRuntime, HANDED_OVER_ENV } from "./runtime.js";

const choice = chooseRuntime();
if (choice.kind === "run") {
  // Node keeps the compiled code of the program's few hundred modules on disk (in the temp folder) from one start to
  // the next: compiling them was most of a short run's start-up. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
  module.enableCompileCache?.();
  // `npm run build` also bundles the program into a few chunks (scripts/bundle.ts), which load faster than its
  // modules one by one; run from the sources, there is no bundle and the modules load as they are.
  const bundle = new URL("../bundle/main.js", import.meta.url);
  await (existsSync(bundle) ? import(bundle.href) : import("./main.js"));
} else if (choice.kind === "refuse") {
  process.stderr.write(choice.message);
  process.exitCode = 1;
} else {
  // In a process group of its own: a terminal's Ctrl-C reaches this process alone and is passed on once, not
  // twice (the daemon takes a second SIGINT as "cancel the running runs now").
  const child = spawn(choice.node, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    detached: true,
    // Started as `node dist/src/cli.js`, this process had no shebang line to set the allocator's environment.
    env: { ...MALLOC_ENV, ...process.env, [HANDED_OVER_ENV]: "1" },
  });
  // The child is the program: signals sent to this process (Ctrl-C, a service manager's SIGTERM, `conveyor reload`'s SIGHUP) go to it.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR2"] as const) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("error", (err) => {
    process.stderr.write(`Conveyor could not start its runtime ${choice.node}: ${err.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
