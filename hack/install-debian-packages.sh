#!/usr/bin/env bash
# Installs the Debian packages the tests and the demo use, when they are missing (root and apt):
# openssl (webhook certificates), iproute2, dash and python3-yaml (the boot script and the real
# cloud-init that judges user data), QEMU, Debian's kernel and what builds the guest image (the
# data-plane suite), mmdebstrap, umoci and skopeo (the container image). Go and Node come first.
set -euo pipefail

packages=(openssl iproute2 dash python3 python3-yaml qemu-system-x86 linux-image-amd64 mmdebstrap e2fsprogs socat busybox-static cpio kmod umoci skopeo debian-archive-keyring)
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "missing Debian packages: ${missing[*]} (install them as root with apt-get; the demo runs without them, some tests do not)" >&2
  exit 0
fi
echo "installing Debian packages: ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
