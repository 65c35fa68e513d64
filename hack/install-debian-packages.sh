#!/usr/bin/env bash
# Installs the Debian packages one purpose needs, only those missing (root and apt). Purposes:
#   demo       openssl (the webhook certificates): all `npm run demo` needs
#   cloud-init python3, python3-yaml: the real cloud-init that judges injected user data; dash,
#              mawk and busybox-static (two POSIX awks) and iproute2: what the boot script runs with
#              in the machine-config tests (stock-image tools, no python3)
#   dataplane  QEMU, Debian's kernel and what builds the guest image (`npm run e2e:dataplane`)
#   image      mmdebstrap, umoci and skopeo (`npm run image`)
#   ignition   gcc and libblkid's headers: Ignition's `ignition` programs link libblkid (hack/build-ignition.sh);
#              systemd, whose systemd-analyze verify judges the units we add (machine-config tests)
#   node       containerd, runc, the CNI plugins, iptables and what builds the sandbox image: the one-node
#              cluster (`npm run cluster:up -- --node`, test/node)
#   all        every purpose above (what `npm test` needs)
# Usage: bash hack/install-debian-packages.sh <purpose> [<purpose> ...]   (default: demo)
set -euo pipefail

packages_for() {
  case "$1" in
    demo) echo openssl ;;
    cloud-init) echo dash mawk busybox-static python3 python3-yaml iproute2 ;;
    dataplane) echo qemu-system-x86 linux-image-amd64 mmdebstrap e2fsprogs socat busybox-static cpio kmod ;;
    image) echo mmdebstrap umoci skopeo debian-archive-keyring ;;
    ignition) echo gcc libc6-dev libblkid-dev systemd ;;
    node) echo containerd runc containernetworking-plugins iptables conntrack iproute2 openssl busybox-static umoci skopeo mount ;;
    all) for p in demo cloud-init dataplane image ignition node; do packages_for "$p"; done ;;
    *) echo "unknown purpose '$1' (demo, cloud-init, dataplane, image, ignition, node, all)" >&2; return 1 ;;
  esac
}

packages=()
for purpose in "${@:-demo}"; do
  list="$(packages_for "$purpose")" # a separate assignment, so that an unknown purpose stops the script
  read -r -a more <<<"${list//$'\n'/ }"
  packages+=("${more[@]}")
done
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "missing Debian packages: ${missing[*]} (install them as root with apt-get)" >&2
  exit 1
fi
echo "installing Debian packages: ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
