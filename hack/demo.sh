#!/usr/bin/env bash
# Quick start, step 1 (`npm run demo`): sets everything up on a fresh machine (the pinned Node.js, npm ci,
# build, the local control plane built from the Go module proxy and started) and runs the demo (hack/demo.js),
# which leaves the simulator, both controllers and the CAPP fixture running for kubectl until
# `npm run demo:down`. Safe to run again: a demo still up is stopped first, then started afresh.
#
# `npm run demo -- --in-cluster`: the same demo with the controllers as pods, installed by
# `helm install` of charts/metal-l2 onto a one-node cluster (`cluster:up -- --node`: containerd, a
# kubelet, kube-proxy) from the image built here (`npm run image`, when .local/image is missing or
# older than the build). Needs root, as the node does.
set -euo pipefail
cd "$(dirname "$0")/.."

in_cluster=0
for arg in "$@"; do
  case "$arg" in
    --in-cluster) in_cluster=1 ;;
    *) echo "usage: npm run demo [-- --in-cluster]" >&2; exit 2 ;;
  esac
done

# Only what the demo itself uses: the tests' packages (QEMU, a kernel, image tools) come with `npm test`'s
# setup (.ci/run), or `bash hack/install-debian-packages.sh all`.
if [ "$in_cluster" = 1 ]; then
  echo "== Debian packages the in-cluster demo needs (openssl, the image's and the node's; only when missing)"
  bash hack/install-debian-packages.sh demo image node
else
  echo "== Debian packages the demo needs (openssl; only when missing)"
  bash hack/install-debian-packages.sh demo
fi
# The project's Node.js (the npm registry's node-linux-<arch>, pinned in hack/nodejs/package-lock.json),
# first on PATH: npm ci, the build, the demo and every process it starts run on it.
echo "== Node.js (pinned in hack/nodejs/package-lock.json; cached in ~/.cache/metal-l2/nodejs)"
node_bin="$(node hack/install-node.js)"
export PATH="$node_bin:$PATH"
hash -r
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "== npm ci"
  npm ci --no-audit --no-fund
fi
echo "== local control plane binaries (built from the Go module proxy on the first run, about 12 minutes on 2 cores; cached after)"
bash hack/build-control-plane.sh >/dev/null
if [ "$in_cluster" = 1 ]; then
  echo "== node binaries: kubelet, kube-scheduler, kube-proxy (Go module proxy on the first run, about 2 minutes; cached after)"
  bash hack/build-control-plane.sh --node >/dev/null
fi
echo "== build"
npm run build --silent
if [ "$in_cluster" = 1 ]; then
  # The image holds the built dist/: rebuilt when any is newer than it (the base and the production
  # node_modules come from ~/.cache/metal-l2/image).
  if [ ! -f .local/image/image.json ] || [ -n "$(find packages/*/dist -newer .local/image/image.json -print -quit)" ]; then
    echo "== the image (npm run image: a cold base takes about 2 minutes, cached after)"
    node hack/build-image.js
  else
    echo "== the image: .local/image is up to date with the build"
  fi
fi
if [ -f .local/demo/state.json ]; then
  echo "== a demo is still up: stopping it first (npm run demo:down)"
  node hack/demo-down.js
fi
if [ "$in_cluster" = 1 ] && [ -f .local/cluster/state.json ] && [ ! -f .local/cluster/node/node.json ]; then
  echo "== a control plane without a node is up: stopping it to start one with a node"
  node packages/local-control-plane/dist/cli.js down
fi
echo "== start the control plane"
if [ "$in_cluster" = 1 ]; then
  node packages/local-control-plane/dist/cli.js up --node
  node hack/demo.js --in-cluster
else
  node packages/local-control-plane/dist/cli.js up
  node hack/demo.js
fi
