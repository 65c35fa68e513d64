#!/usr/bin/env bash
# Builds Ignition's own programs from the Go module proxy, for both spec families, into a cache
# outside the work tree (a second run with the same versions returns at once):
#   ignition v0.35.0 (module github.com/coreos/ignition, spec 2.x: CABPK v1.7.9's `format: ignition`
#     is spec 2.3): `ignition-validate`, and `ignition`, which runs one stage against a root
#     directory (`ignition -oem file -stage files -root DIR`, config from $IGNITION_CONFIG_FILE);
#   ignition v2.24.0 (module github.com/coreos/ignition/v2, spec 3.x): `ignition-validate`, and
#     `ignition-apply` (`ignition-apply --root DIR config.ign`: the same binary, chosen by its name).
# Layout: $CACHE/ignition/<version>/bin/{ignition-validate,ignition|ignition-apply}.
# Prints each binary's path on stdout, one a line: v0.35.0's validate, ignition, then v2.24.0's
# validate, ignition-apply. `--print-dir` prints only the cache root ($CACHE/ignition).
#
# Needs Go, a C compiler and libblkid's headers (Debian: libblkid-dev; `hack/install-debian-packages.sh
# ignition`): the `ignition` binaries link libblkid through cgo, as the released ones do.
set -euo pipefail

V0_VERSION="${IGNITION_V0_VERSION:-v0.35.0}"
V2_VERSION="${IGNITION_V2_VERSION:-v2.24.0}"
CACHE_ROOT="${METAL_L2_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metal-l2}/ignition"

log() { printf '[build-ignition] %s\n' "$*" >&2; }

if [ "${1:-}" = "--print-dir" ]; then
  echo "$CACHE_ROOT"
  exit 0
fi

# copy_module <module@version> <dir>: the module's released source, writable, in <dir>/src.
copy_module() {
  local dir
  dir="$(go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -n "$dir" ] || { log "go mod download $1 gave no directory"; exit 1; }
  rm -rf "$2/src"
  mkdir -p "$2"
  cp -r "$dir" "$2/src"
  chmod -R u+w "$2/src"
}

# v0.35.0 predates Go modules (glide, and the proxy's zip carries no vendor directory), so its go.mod
# is written here. The proxy serves neither glide.lock's commits nor github.com/ajeddeloh/go-json; that
# repository moved to github.com/coreos/go-json, which it serves at the commit Ignition v2 pins: a
# copy of it, renamed back, replaces the old path. ignition-validate needs nothing else.
GO_JSON="github.com/coreos/go-json@v0.0.0-20230131223807-18775e0fb4fb"
build_v0() {
  local out="$CACHE_ROOT/$V0_VERSION"
  local validate="$out/bin/ignition-validate"
  if [ -x "$validate" ]; then
    log "cached: $validate"
  else
    log "building github.com/coreos/ignition $V0_VERSION (ignition-validate)"
    copy_module "github.com/coreos/ignition@$V0_VERSION" "$out"
    copy_module "$GO_JSON" "$out/go-json"
    (
      cd "$out/go-json/src"
      go mod edit -module github.com/ajeddeloh/go-json
      cd "$out/src"
      go mod init github.com/coreos/ignition >/dev/null 2>&1
      go mod edit -replace "github.com/ajeddeloh/go-json=../go-json/src"
      go mod tidy -e >/dev/null 2>&1 || true
      local ldflags="-X github.com/coreos/ignition/internal/version.Raw=$V0_VERSION"
      CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$validate.tmp" ./validate
      mv "$validate.tmp" "$validate"
    )
    log "built: $validate"
  fi
  echo "$validate"
}

# v2 is a module with its own go.mod and go.sum: built from its released source as it is.
build_v2() {
  local out="$CACHE_ROOT/$V2_VERSION"
  local validate="$out/bin/ignition-validate" apply="$out/bin/ignition-apply"
  if [ -x "$validate" ] && [ -x "$apply" ]; then
    log "cached: $out/bin"
  else
    log "building github.com/coreos/ignition/v2 $V2_VERSION"
    copy_module "github.com/coreos/ignition/v2@$V2_VERSION" "$out"
    (
      cd "$out/src"
      local ldflags="-X github.com/coreos/ignition/v2/internal/version.Raw=$V2_VERSION"
      CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "$ldflags" -o "$validate.tmp" ./validate
      CGO_ENABLED=1 go build -mod=mod -trimpath -ldflags "$ldflags" -o "$apply.tmp" ./internal
      mv "$validate.tmp" "$validate"
      mv "$apply.tmp" "$apply"
    )
    log "built: $out/bin"
  fi
  echo "$validate"
  echo "$apply"
}

command -v go >/dev/null || { log "Go is required; it must reach a Go module proxy"; exit 1; }
export GOFLAGS=-mod=mod
mkdir -p "$CACHE_ROOT"
build_v0
build_v2
