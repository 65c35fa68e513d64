#!/usr/bin/env bash
# Builds containerd's daemon, `ctr` and the runc shim from the Go module proxy, one release of each
# line that Flatcar ships, into a cache outside the work tree (a second run with the same versions
# returns at once). The image test runs metal-l2-endpoint.service's exact `ctr` lines against them:
# Debian's containerd is 1.6, whose `ctr run` has no `--user`, and Flatcar ships 1.7 (older stable)
# and 2.x (current).
# Layout: $CACHE/containerd/<version>/bin/{containerd,ctr,containerd-shim-runc-v2}.
# Prints each version's bin directory on stdout, one a line, in the order of $METAL_L2_CONTAINERD_VERSIONS
# (default "v2.0.14 v1.7.35"). `--print-dir` prints only the cache root ($CACHE/containerd).
# Needs Go only (CGO off; btrfs snapshotter left out, the tests use overlayfs); runc comes from Debian.
set -euo pipefail

VERSIONS="${METAL_L2_CONTAINERD_VERSIONS:-v2.0.14 v1.7.35}"
CACHE_ROOT="${METAL_L2_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metal-l2}/containerd"

log() { printf '[build-containerd] %s\n' "$*" >&2; }

if [ "${1:-}" = "--print-dir" ]; then
  echo "$CACHE_ROOT"
  exit 0
fi

# module_path <version>: v2 releases live under the /v2 module path.
module_path() {
  case "$1" in
    v1.*) echo github.com/containerd/containerd ;;
    *) echo github.com/containerd/containerd/v2 ;;
  esac
}

build_version() {
  local version="$1" out="$CACHE_ROOT/$1" module dir started=$SECONDS
  if [ -x "$out/bin/containerd" ] && [ -x "$out/bin/ctr" ] && [ -x "$out/bin/containerd-shim-runc-v2" ]; then
    log "cached: $out/bin"
    echo "$out/bin"
    return
  fi
  module="$(module_path "$version")"
  log "building $module $version"
  dir="$(go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -n "$dir" ] || { log "go mod download $module@$version gave no directory"; exit 1; }
  rm -rf "$out/src"
  mkdir -p "$out/bin"
  cp -r "$dir" "$out/src"
  chmod -R u+w "$out/src"
  (
    cd "$out/src"
    rm -rf vendor # the proxy's zip keeps only vendor/modules.txt: build from the module cache
    local ldflags="-X $module/version.Version=$version -X $module/version.Revision=metal-l2"
    local cmd
    for cmd in containerd ctr containerd-shim-runc-v2; do
      CGO_ENABLED=0 go build -p 1 -mod=mod -trimpath -tags "no_btrfs no_devmapper no_zfs" \
        -ldflags "$ldflags" -o "$out/bin/$cmd.tmp" "./cmd/$cmd"
    done
    for cmd in containerd ctr containerd-shim-runc-v2; do mv "$out/bin/$cmd.tmp" "$out/bin/$cmd"; done
  )
  rm -rf "$out/src"
  log "built $version in $((SECONDS - started)) s: $out/bin"
  echo "$out/bin"
}

command -v go >/dev/null || { log "Go is required; it must reach a Go module proxy"; exit 1; }
mkdir -p "$CACHE_ROOT"
for version in $VERSIONS; do build_version "$version"; done
