import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * Vitest global setup: every temp folder of the run (work folders, stores,
 * fake servers' files, child processes' data) goes under one root that is
 * removed when the run ends, here in one place rather than in each of the
 * ~20 test files that make folders (a failed test's files stay readable
 * while the run goes on). A full run used to leave over 600 MB in /tmp each
 * time, on machines that have run short of disk.
 */
export default function setup(): () => void {
  const root = mkdtempSync(path.join(tmpdir(), "conveyor-tests-"));
  // Dovecot's mail processes run as another user and must reach into their folder below.
  chmodSync(root, 0o755);
  process.env.TMPDIR = root;
  // Every daemon or service a test starts, in-process or as a child, takes a free port unless the test says otherwise:
  // the default 127.0.0.1:8081 would collide between files running side by side.
  process.env.CONVEYOR_SERVICE_LISTEN = "127.0.0.1:0";
  return () => {
    rmSync(root, { recursive: true, force: true });
  };
}
