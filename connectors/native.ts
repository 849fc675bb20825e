import { createRequire } from "node:module";

/*
 * ssh2 falls back to JavaScript ciphers without a word when its native binding
 * was not built (npm 11 skips install scripts that `allowScripts` does not
 * approve): SFTP then moves several times slower. The daemon
 * says so at start, and a test fails the build when the binding is missing.
 */

const require = createRequire(import.meta.url);

/** Whether ssh2 loaded its compiled crypto binding. */
export function sshNativeCrypto(): boolean {
  try {
    const crypto = require("ssh2/lib/protocol/crypto.js") as { bindingAvailable?: unknown };
    return crypto.bindingAvailable === true;
  } catch {
    return false;
  }
}

/** A warning for the daemon's log when a native add-on is missing, or null. */
export function nativeWarning(): string | null {
  if (sshNativeCrypto()) return null;
  return "ssh2's native crypto binding is not built: SFTP transfers fall back to JavaScript ciphers (about 7× slower); run `npm rebuild ssh2` with python3, make and g++ installed, and keep ssh2 in allowScripts";
}
