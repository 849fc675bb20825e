#!/usr/bin/env bash
# Usage: bash bench/runtimes.sh <node version> <npm script> [args...]
#   e.g. bash bench/runtimes.sh 20.20.2 bench:import 1000000
# Runs one benchmark on the project's own runtime (node_modules/.bin/node) and
# then on Node.js <version> from the npm registry (a copy of the project
# installed and built by it, scripts/node-copy.sh), back to back on the same
# machine, so the two runtimes are compared in one run.
set -euo pipefail
OTHER="${1:?node version to compare with}"
SCRIPT="${2:?npm script, e.g. bench:import}"
shift 2
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/conveyor-runtimes-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

echo "== $SCRIPT on $(cd "$ROOT" && npx node --version) (the project's own)"
# A benchmark that misses its own targets exits 1; the other runtime still runs.
(cd "$ROOT" && npm run --silent "$SCRIPT" -- "$@") || echo "($SCRIPT exited $?)"

# shellcheck source=scripts/node-copy.sh
source "$ROOT/scripts/node-copy.sh" "$OTHER" "$WORK" >/dev/null
# better-sqlite3 13 needs Node-API 10, which no Node 20 has; its 12 line has the same API.
if [ "${OTHER%%.*}" -lt 22 ]; then (cd "$WORK/app" && npm install --no-save --omit=optional --no-audit --no-fund --loglevel=error better-sqlite3@12); fi
# The copy has no bundled runtime: its scripts must run on the Node under test.
[ "$(cd "$WORK/app" && npx node --version)" = "v$OTHER" ] || { echo "the copy does not run on Node $OTHER"; exit 1; }
echo "== $SCRIPT on $(node --version)"
(cd "$WORK/app" && npm run --silent "$SCRIPT" -- "$@") || echo "($SCRIPT exited $?)"
