#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver, kube-controller-manager, kubectl, helm)
# from the Go module proxy only, with pinned versions, into a cache outside the work tree.
# With --node it builds the one-node cluster's programs instead (kubelet, kube-scheduler,
# kube-proxy, from the same k8s.io/kubernetes module setup) into their own versioned cache.
# A second run with the same versions finds the binaries and returns at once; the last line of
# the output is the bin directory.
set -euo pipefail

MODE=control-plane
[ "${1:-}" = "--node" ] && MODE=node

K8S_VERSION="${K8S_VERSION:-v1.34.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.13}"
HELM_VERSION="${HELM_VERSION:-v3.19.0}"
CACHE_ROOT="${METAL_L2_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metal-l2}"
if [ "$MODE" = node ]; then
  OUT="$CACHE_ROOT/node/k8s-${K8S_VERSION}"
  want=(kubelet kube-scheduler kube-proxy)
else
  OUT="$CACHE_ROOT/control-plane/k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_helm-${HELM_VERSION}"
  want=(etcd kube-apiserver kube-controller-manager kubectl helm)
fi
BIN="$OUT/bin"

log() { printf '[build-control-plane] %s\n' "$*" >&2; }

have_all() { for b in "${want[@]}"; do [ -x "$BIN/$b" ] || return 1; done; }

if have_all; then
  log "cached: $BIN"
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || { log "Go is required (https://go.dev/doc/install); it must reach a Go module proxy"; exit 1; }
mkdir -p "$BIN"
WORK="$OUT/src"
mkdir -p "$WORK"
export CGO_ENABLED=0 GOFLAGS=-mod=mod

k8s_minor="$(echo "$K8S_VERSION" | cut -d. -f2)"
staging_version="v0.${K8S_VERSION#v1.}"

build_kubernetes() { # cmd...: programs under k8s.io/kubernetes/cmd/
  local dir="$WORK/kubernetes"
  mkdir -p "$dir"
  cd "$dir"
  if [ ! -f go.mod ]; then
    go mod init metal-l2.local/control-plane-kubernetes >/dev/null 2>&1
  fi
  # k8s.io/kubernetes requires each staging module at v0.0.0 and replaces it with ./staging;
  # take the list of staging modules from its own go.mod and pin each to the matching v0.Y.Z tag.
  local gomod
  gomod="$(go mod download -json "k8s.io/kubernetes@${K8S_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  [ -f "$gomod" ] || { log "could not download k8s.io/kubernetes@${K8S_VERSION}"; return 1; }
  local mods
  mods="$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$gomod")"
  for m in $mods; do go mod edit "-replace=${m}=${m}@${staging_version}"; done
  go mod edit "-require=k8s.io/kubernetes@${K8S_VERSION}"
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for cmd in "$@"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$cmd"; done
    printf ')\n'
  } > tools.go
  go mod tidy >/dev/null
  local ld="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $pkg.gitVersion=${K8S_VERSION} -X $pkg.gitMajor=1 -X $pkg.gitMinor=${k8s_minor}"
    ld="$ld -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  for cmd in "$@"; do
    log "building $cmd ${K8S_VERSION}"
    go build -trimpath -ldflags "$ld" -o "$BIN/$cmd" "k8s.io/kubernetes/cmd/$cmd"
  done
}

# Builds one program from a throw-away module that requires its module at a pinned version: go
# install refuses modules whose go.mod has replace directives (etcd's has), a dependency does not.
build_from_module() { # name module version package ldflags
  local name="$1" module="$2" version="$3" pkg="$4" ld="$5"
  local dir="$WORK/$name"
  mkdir -p "$dir"
  cd "$dir"
  [ -f go.mod ] || go mod init "metal-l2.local/control-plane-$name" >/dev/null 2>&1
  go mod edit "-require=${module}@${version}"
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$pkg" > tools.go
  go mod tidy >/dev/null
  log "building $name ${version}"
  go build -trimpath -ldflags "$ld" -o "$BIN/$name" "$pkg"
}

build_etcd() {
  build_from_module etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" go.etcd.io/etcd/server/v3 "-s -w"
}

build_helm() {
  local ld="-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}"
  for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
    ld="$ld -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=${k8s_minor}"
  done
  build_from_module helm helm.sh/helm/v3 "$HELM_VERSION" helm.sh/helm/v3/cmd/helm "$ld"
}

if [ "$MODE" = node ]; then
  build_kubernetes kubelet kube-scheduler kube-proxy
else
  [ -x "$BIN/etcd" ] || build_etcd
  [ -x "$BIN/helm" ] || build_helm
  if [ ! -x "$BIN/kube-apiserver" ] || [ ! -x "$BIN/kube-controller-manager" ] || [ ! -x "$BIN/kubectl" ]; then
    build_kubernetes kube-apiserver kube-controller-manager kubectl
  fi
fi
have_all || { log "build incomplete in $BIN"; exit 1; }
log "built: $BIN"
echo "$BIN"
