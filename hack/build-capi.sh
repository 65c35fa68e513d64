#!/usr/bin/env bash
# Builds the real Cluster API programs the e2e:capi suite runs next to metal-l2, into a cache
# outside the work tree, keyed by version:
#   capi-manager   Cluster API core         go install sigs.k8s.io/cluster-api@$CAPI_VERSION
#   cabpk-manager  kubeadm bootstrap        go install sigs.k8s.io/cluster-api/bootstrap/kubeadm@$CAPI_VERSION
#   kcp-manager    kubeadm control plane    go install sigs.k8s.io/cluster-api/controlplane/kubeadm@$CAPI_VERSION
#   capp-manager   Cluster API Provider Packet, go build in a copy of
#                  ../shared/upstream-src/cluster-api-provider-packet-$CAPP_VERSION (not on the Go
#                  module proxy; its dependencies are). The copy lives in the cache, never in the repo.
# Everything comes from the Go module proxy and ../shared (METAL_L2_SHARED overrides it). A second run
# with the same versions finds the binaries and returns at once. The last line of stdout is the bin
# directory; progress, timings and failures go to stderr.
set -euo pipefail

CAPI_VERSION="${CAPI_VERSION:-v1.7.9}"
CAPP_VERSION="${CAPP_VERSION:-v0.9.0}"
REPO_ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${METAL_L2_SHARED:-$REPO_ROOT/../shared}"
CAPP_SRC="$SHARED/upstream-src/cluster-api-provider-packet-${CAPP_VERSION}"
CACHE_ROOT="${METAL_L2_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metal-l2}"
KEY="capi-${CAPI_VERSION}_capp-${CAPP_VERSION}"
OUT="$CACHE_ROOT/capi/$KEY"
BIN="$OUT/bin"

log() { printf '[build-capi] %s\n' "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

want=(capi-manager cabpk-manager kcp-manager capp-manager)
have_all() { for b in "${want[@]}"; do [ -x "$BIN/$b" ] || return 1; done; }

# The CRDs of CAPI_VERSION, which the e2e suite installs, sit in the Go module cache (CAPP's come
# from ../shared/upstream-crds). A cache restored without the module cache gets them again here.
ensure_capi_crds() {
  local modcache
  modcache="$(go env GOMODCACHE)/sigs.k8s.io/cluster-api@${CAPI_VERSION}"
  if [ ! -d "$modcache/config/crd/bases" ]; then
    (cd "$OUT" && go mod download "sigs.k8s.io/cluster-api@${CAPI_VERSION}") >&2 ||
      fail "could not download sigs.k8s.io/cluster-api@${CAPI_VERSION} from the Go module proxy (for its CRDs)"
  fi
  for d in config/crd/bases bootstrap/kubeadm/config/crd/bases controlplane/kubeadm/config/crd/bases; do
    [ -d "$modcache/$d" ] || fail "Cluster API ${CAPI_VERSION} CRDs missing at $modcache/$d"
  done
}

command -v go >/dev/null || fail "Go is required (https://go.dev/doc/install); it must reach a Go module proxy (GOPROXY=${GOPROXY:-https://proxy.golang.org})"
mkdir -p "$BIN" "$OUT/src"

if have_all; then
  ensure_capi_crds
  log "cached: $BIN"
  echo "$BIN"
  exit 0
fi

 >/dev/null || fail "Go is required (https://go.dev/doc/install); it must reach a Go module proxy ($(printf '%s' "${GOPROXY:-https://proxy.golang.org}"))"
mkdir -p "$BIN" "$OUT/src"
# Static binaries; the module graph may be completed from the proxy (CAPP's go.sum is what it
# shipped with); use the local toolchain rather than downloading the one a go.mod names.
export CGO_ENABLED=0 GOTOOLCHAIN=local
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"
LDFLAGS="-s -w"

total_start=$SECONDS
timings=()
phase() { # name seconds
  timings+=("$1=${2}s")
  log "$1 done in ${2}s"
}

# go install writes <last path element of the package> into GOBIN: all three CAPI managers would
# be named after their directory (cluster-api, kubeadm, kubeadm), so each gets its own GOBIN and
# is renamed into place. A partial build never leaves a binary under its final name.
install_capi() { # name package
  local name="$1" pkg="$2" gobin="$OUT/gobin/$1" start=$SECONDS
  [ -x "$BIN/$name" ] && { log "$name cached"; return 0; }
  log "building $name: go install ${pkg}@${CAPI_VERSION}"
  rm -rf "$gobin" && mkdir -p "$gobin"
  if ! GOBIN="$gobin" go install -ldflags "$LDFLAGS" "${pkg}@${CAPI_VERSION}" >&2; then
    fail "$name: 'go install ${pkg}@${CAPI_VERSION}' did not build (see the Go output above; is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"
  fi
  local built
  built="$(find "$gobin" -maxdepth 1 -type f -perm -u+x | head -n1)"
  [ -n "$built" ] || fail "$name: go install succeeded but left no binary in $gobin"
  mv "$built" "$BIN/$name"
  rm -rf "$gobin"
  phase "$name" $((SECONDS - start))
}

build_capp() {
  local start=$SECONDS dir="$OUT/src/cluster-api-provider-packet-${CAPP_VERSION}"
  [ -x "$BIN/capp-manager" ] && { log "capp-manager cached"; return 0; }
  [ -f "$CAPP_SRC/go.mod" ] || fail "capp-manager: no CAPP ${CAPP_VERSION} source at $CAPP_SRC (the shared folder beside the clone; METAL_L2_SHARED overrides it). It is not served by the Go module proxy."
  log "building capp-manager: go build in a copy of $CAPP_SRC"
  rm -rf "$dir" && mkdir -p "$dir"
  cp -R "$CAPP_SRC/." "$dir/"
  chmod -R u+w "$dir"
  if ! (cd "$dir" && go build -mod=mod -ldflags "$LDFLAGS" -o "$BIN/capp-manager.partial" .) >&2; then
    fail "capp-manager: 'go build' in $dir did not build (see the Go output above)"
  fi
  mv "$BIN/capp-manager.partial" "$BIN/capp-manager"
  phase capp-manager $((SECONDS - start))
}

install_capi capi-manager sigs.k8s.io/cluster-api
install_capi cabpk-manager sigs.k8s.io/cluster-api/bootstrap/kubeadm
install_capi kcp-manager sigs.k8s.io/cluster-api/controlplane/kubeadm
build_capp

have_all || fail "build incomplete in $BIN (want ${want[*]})"
ensure_capi_crds
log "built: $BIN in $((SECONDS - total_start))s (${timings[*]})"
echo "$BIN"
