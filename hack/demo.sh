#!/usr/bin/env bash
# Quick start, step 1 (`npm run demo`): sets everything up on a fresh machine (npm ci, build, the
# local control plane built from the Go module proxy and started) and runs the demo (hack/demo.js),
# which leaves the simulator, both controllers and the CAPP fixture running for kubectl until
# `npm run demo:down`. Safe to run again: a demo still up is stopped first, then started afresh.
set -euo pipefail
cd "$(dirname "$0")/.."

# Only what the demo itself uses: the tests' packages (QEMU, a kernel, image tools) come with `npm test`'s
# setup (.ci/run), or `bash hack/install-debian-packages.sh all`.
echo "== Debian packages the demo needs (openssl; only when missing)"
bash hack/install-debian-packages.sh demo
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "== npm ci"
  npm ci --no-audit --no-fund
fi
echo "== local control plane binaries (built from the Go module proxy on the first run, about 12 minutes on 2 cores; cached after)"
bash hack/build-control-plane.sh >/dev/null
echo "== build"
npm run build --silent
if [ -f .local/demo/state.json ]; then
  echo "== a demo is still up: stopping it first (npm run demo:down)"
  node hack/demo-down.js
fi
echo "== start the control plane"
node packages/local-control-plane/dist/cli.js up
node hack/demo.js
