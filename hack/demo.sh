#!/usr/bin/env bash
# Quick start, step 1: sets everything up on a fresh machine and runs the demo on the local
# control plane. Safe to run again; a second run reuses the npm install and the built binaries.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "== npm ci"
  npm ci --no-audit --no-fund
fi
echo "== local control plane (built from the Go module proxy on the first run; cached after)"
bash hack/build-control-plane.sh >/dev/null
echo "== build"
npm run build --silent
echo "== start the control plane"
node packages/local-control-plane/dist/cli.js up
node hack/demo.js
