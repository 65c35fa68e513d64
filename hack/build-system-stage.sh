#!/usr/bin/env bash
# The Go builds only the system stage needs, each cached by version (a warm run ends at once): the
# real Cluster API v1.7.9 + CAPP v0.9.0 managers, the node's kubelet, kube-scheduler and kube-proxy,
# and containerd v2.0.14 + v1.7.35. .ci/run runs this in the background at the lowest CPU priority,
# with its exit status and duration in .local/system-builds.status, and the system stage waits for
# that (hack/test/background-builds.js).
set -euo pipefail
cd "$(dirname "$0")/.."
bash hack/build-capi.sh
bash hack/build-control-plane.sh --node
bash hack/build-containerd.sh
