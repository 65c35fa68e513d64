#!/usr/bin/env bash
# Builds the reference Cluster API in-cluster IPAM provider (the module's root main package) at a
# pinned version from the Go module proxy only, into a cache outside the work tree, for the
# throughput comparison in hack/bench.js. A second run with the same version returns at once.
# Prints the path of the binary on its last line of stdout.
set -euo pipefail

REFERENCE_MODULE="sigs.k8s.io/cluster-api-ipam-provider-in-cluster"
REFERENCE_VERSION="${REFERENCE_IPAM_VERSION:-v1.0.3}"
CACHE_ROOT="${METAL_L2_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metal-l2}"
OUT="$CACHE_ROOT/reference-ipam/in-cluster-${REFERENCE_VERSION}"
BIN="$OUT/bin/cluster-api-ipam-provider-in-cluster"

log() { printf '[build-reference-ipam] %s\n' "$*" >&2; }

if [ -x "$BIN" ]; then
  log "cached: $BIN"
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || { log "Go is required; it must reach a Go module proxy"; exit 1; }
WORK="$OUT/src"
mkdir -p "$WORK" "$(dirname "$BIN")"
cd "$WORK"
export CGO_ENABLED=0 GOFLAGS=-mod=mod

# A throw-away module that requires the provider; its own go.mod has no replace directives, so
# building its main package by import path from here gives the released program.
[ -f go.mod ] || go mod init metal-l2.local/reference-ipam >/dev/null 2>&1
go mod edit "-require=${REFERENCE_MODULE}@${REFERENCE_VERSION}"
cat > tools.go <<GO
//go:build tools

package tools

import _ "${REFERENCE_MODULE}"
GO
go mod tidy >/dev/null
# Keep the provider's own dependency versions (tidy may only raise them, never lower).
got="$(go list -m -f '{{.Version}}' "$REFERENCE_MODULE")"
[ "$got" = "$REFERENCE_VERSION" ] || { log "resolved $REFERENCE_MODULE $got, wanted $REFERENCE_VERSION"; exit 1; }

log "building $REFERENCE_MODULE $REFERENCE_VERSION"
tmp="$BIN.tmp.$$"
go build -trimpath -ldflags "-s -w" -o "$tmp" "$REFERENCE_MODULE"
mv "$tmp" "$BIN"
log "built: $BIN"
echo "$BIN"
