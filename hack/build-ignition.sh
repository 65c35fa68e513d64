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
# is written here. The proxy serves neither glide.lock's commits nor a few of its modules:
# - github.com/ajeddeloh/go-json moved to github.com/coreos/go-json, which the proxy serves at the
#   commit Ignition v2 pins; a copy of it, renamed back, replaces the old path;
# - github.com/pin/tftp (tftp:// URLs) and the VMware guestinfo modules (the `vmware` OEM) are not
#   served at all: stand-ins written here (write_stubs) fail whenever they are called. Neither is
#   reached by `-oem file` with data: URLs, which is how the tests run it.
# The other dependencies resolve to the proxy's versions nearest the release (aws-sdk-go v1.19.x and
# go-systemd and godbus of spring 2019, like glide.lock's commits).
GO_JSON="github.com/coreos/go-json@v0.0.0-20230131223807-18775e0fb4fb"
AWS_SDK="github.com/aws/aws-sdk-go@v1.19.18"
GO_SYSTEMD="github.com/coreos/go-systemd@v0.0.0-20190321100706-95778dfbb74e"
GODBUS="github.com/godbus/dbus@v0.0.0-20190422162347-ade71ed3457e"

write_stubs() {
  local d="$1"
  mkdir -p "$d/tftp" "$d/guestinfo/rpcvmx" "$d/guestinfo/vmcheck" "$d/ovflib"
  printf 'module github.com/pin/tftp\n\ngo 1.18\n' >"$d/tftp/go.mod"
  cat >"$d/tftp/tftp.go" <<'GO'
// Package tftp stands in for github.com/pin/tftp, which the Go module proxy does not serve: this
// build of Ignition cannot fetch tftp:// URLs.
package tftp

import (
	"errors"
	"io"
)

type Client struct{}

func NewClient(addr string) (*Client, error) {
	return nil, errors.New("tftp is not available in this build of ignition (metal-l2 hack/build-ignition.sh)")
}

func (c *Client) Receive(path, mode string) (io.WriterTo, error) {
	return nil, errors.New("tftp is not available in this build of ignition")
}
GO
  printf 'module github.com/sigma/vmw-guestinfo\n\ngo 1.18\n' >"$d/guestinfo/go.mod"
  cat >"$d/guestinfo/vmcheck/vmcheck.go" <<'GO'
// Package vmcheck stands in for github.com/sigma/vmw-guestinfo/vmcheck (not served by the Go module
// proxy): this build of Ignition never runs in a VMware guest.
package vmcheck

func IsVirtualWorld() bool { return false }
GO
  cat >"$d/guestinfo/rpcvmx/rpcvmx.go" <<'GO'
// Package rpcvmx stands in for github.com/sigma/vmw-guestinfo/rpcvmx (not served by the Go module proxy).
package rpcvmx

import "errors"

type Config struct{}

func NewConfig() *Config { return &Config{} }

func (c *Config) String(key, fallback string) (string, error) {
	return "", errors.New("VMware guestinfo is not available in this build of ignition")
}
GO
  printf 'module github.com/vmware/vmw-ovflib\n\ngo 1.18\n' >"$d/ovflib/go.mod"
  cat >"$d/ovflib/ovf.go" <<'GO'
// Package ovf stands in for github.com/vmware/vmw-ovflib (not served by the Go module proxy).
package ovf

import "errors"

type OvfEnvironment struct{ Properties map[string]string }

func ReadEnvironment(doc []byte) (*OvfEnvironment, error) {
	return nil, errors.New("OVF environments are not available in this build of ignition")
}
GO
}

build_v0() {
  local out="$CACHE_ROOT/$V0_VERSION"
  local validate="$out/bin/ignition-validate" ignition="$out/bin/ignition"
  if [ -x "$validate" ] && [ -x "$ignition" ]; then
    log "cached: $out/bin"
  else
    log "building github.com/coreos/ignition $V0_VERSION"
    copy_module "github.com/coreos/ignition@$V0_VERSION" "$out"
    copy_module "$GO_JSON" "$out/go-json"
    rm -rf "$out/stubs"
    write_stubs "$out/stubs"
    (
      cd "$out/go-json/src"
      go mod edit -module github.com/ajeddeloh/go-json
      cd "$out/src"
      go mod init github.com/coreos/ignition >/dev/null 2>&1
      go mod edit \
        -replace "github.com/ajeddeloh/go-json=../go-json/src" \
        -replace "github.com/pin/tftp=../stubs/tftp" \
        -replace "github.com/sigma/vmw-guestinfo=../stubs/guestinfo" \
        -replace "github.com/vmware/vmw-ovflib=../stubs/ovflib"
      go get "$AWS_SDK" "$GO_SYSTEMD" "$GODBUS" >/dev/null 2>&1
      go mod tidy >/dev/null 2>&1 || { log "go mod tidy failed"; go mod tidy; exit 1; }
      local ldflags="-X github.com/coreos/ignition/internal/version.Raw=$V0_VERSION"
      CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$validate.tmp" ./validate
      CGO_ENABLED=1 go build -trimpath -ldflags "$ldflags" -o "$ignition.tmp" ./internal
      mv "$validate.tmp" "$validate"
      mv "$ignition.tmp" "$ignition"
    )
    log "built: $out/bin"
  fi
  echo "$validate"
  echo "$ignition"
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
