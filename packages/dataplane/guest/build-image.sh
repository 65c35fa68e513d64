#!/usr/bin/env bash
# Builds the data-plane guest: a Debian 12 (bookworm) root file system from Debian packages only
# (mmdebstrap), what Equinix's provisioner leaves on a Debian server before user data runs
# (bond0 over the NICs in /etc/network/interfaces, NIC names pinned by MAC, the bonding module,
# cloud-init with networking disabled), plus the harness's command agent; Debian's kernel and a
# small initramfs beside it.
#
# Usage: build-image.sh <output dir> <kernel version>
# Writes <out>/rootfs.ext4, <out>/vmlinuz, <out>/initrd.img. Called by src/guest-image.ts, which
# caches the result under the hash of this folder's files and the kernel version.
set -euo pipefail

out="$1"
kver="$2"
here="$(cd "$(dirname "$0")" && pwd)"
files="$here/files"
work="$(mktemp -d "${out}.work.XXXXXX")"
trap 'rm -rf "$work"' EXIT
root="$work/root"

# The guest's modules come from the same Debian kernel package as its vmlinuz (linux-image-amd64).
[ -r "/boot/vmlinuz-$kver" ] || { echo "no /boot/vmlinuz-$kver: install linux-image-amd64" >&2; exit 1; }
[ -d "/lib/modules/$kver" ] || { echo "no /lib/modules/$kver" >&2; exit 1; }

# The Debian root is the slow part (downloads): cached apart, keyed by exactly what it is made of,
# in $METAL_L2_GUEST_BASE_DIR when set, so editing the steps below does not download it again.
# keepalived announces a cluster's control-plane VIP (docs/vip-announcer.md): pinned, so a new Debian
# build of it changes this script, hence the image's cache key, and CI rebuilds the image.
keepalived_version='1:2.2.7-1+b2'
# dbus: the Flatcar-style guest's boot script asks systemd-networkd (`networkctl`) over the system bus,
# as on Flatcar, which has one. gawk: Flatcar's awk, the Flatcar-style guest's (the others keep
# Debian's mawk, below). curl: the boot script reads the metadata service with curl (or wget), which
# Flatcar and the Debian/Ubuntu server images ship; minbase has neither.
packages=systemd-sysv,udev,dbus,cloud-init,ifupdown,ifenslave,iproute2,iputils-ping,python3,kmod,netbase,gawk,curl,keepalived=$keepalived_version
mmdebstrap_args=(--variant=minbase --include="$packages"
  --aptopt='APT::Install-Recommends "false"'
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*'
  bookworm)
base_key="$(printf '%s\n' "${mmdebstrap_args[@]}" | sha256sum | cut -c1-16)"
base_dir="${METAL_L2_GUEST_BASE_DIR:-$work}"
base_tar="$base_dir/debian-base-$base_key.tar"
if [ ! -s "$base_tar" ]; then
  mkdir -p "$base_dir"
  mmdebstrap "${mmdebstrap_args[@]}" "$work/base.tar" http://deb.debian.org/debian
  mv "$work/base.tar" "$base_tar"
fi
mkdir -p "$root"
tar --numeric-owner -C "$root" -xpf "$base_tar"

# Kernel modules the guest needs after the initramfs: VLANs (8021q and its dependencies), bonding,
# the agent's virtio-serial port. Resolved with their dependencies by modprobe, then depmod.
mods="8021q bonding virtio_console virtio_net tls"
for m in $mods; do
  modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | sort -u | while read -r path; do
  mkdir -p "$root$(dirname "$path")"
  cp "$path" "$root$path"
done
cp "/lib/modules/$kver/modules.order" "/lib/modules/$kver/modules.builtin" "/lib/modules/$kver/modules.builtin.modinfo" "$root/lib/modules/$kver/"
depmod -b "$root" "$kver"
printf 'bonding\n8021q\n' > "$root/etc/modules-load.d/metal-l2.conf"

# Equinix-like network: bond0 over ens4+ens5, a management NIC for the metadata service.
install -m 0644 "$files/interfaces" "$root/etc/network/interfaces"
mkdir -p "$root/etc/network/interfaces.d"
# NIC names pinned by MAC: the provisioner unit writes .link files from the kernel command line.
install -m 0755 "$files/metal-l2-pin-nics" "$root/usr/local/sbin/metal-l2-pin-nics"
install -m 0644 "$files/metal-l2-pin-nics.service" "$root/etc/systemd/system/metal-l2-pin-nics.service"
ln -sf /etc/systemd/system/metal-l2-pin-nics.service "$root/etc/systemd/system/sysinit.target.wants/metal-l2-pin-nics.service"

# A Flatcar-style guest (metal_l2.os=flatcar, src/guest.ts) gets bond0 from systemd-networkd units
# the provisioner writes at boot, as Afterburn does on Flatcar; the unit does nothing on other guests.
install -m 0755 "$files/metal-l2-networkd" "$root/usr/local/sbin/metal-l2-networkd"
install -m 0644 "$files/metal-l2-networkd.service" "$root/etc/systemd/system/metal-l2-networkd.service"
ln -sf /etc/systemd/system/metal-l2-networkd.service "$root/etc/systemd/system/sysinit.target.wants/metal-l2-networkd.service"

# cloud-init: NoCloud only, networking left to ifupdown, only the modules user data needs.
install -m 0644 "$files/cloud.cfg" "$root/etc/cloud/cloud.cfg.d/90-metal-l2.cfg"

# awk is Debian's mawk, as on Debian's cloud images (gawk, installed for the Flatcar-style guest,
# would take the alternative); initramfs-init makes it gawk on a Flatcar-style guest.
ln -sf /usr/bin/mawk "$root/etc/alternatives/awk"

# The command agent on the virtio-serial port metal-l2.agent. Its interpreter is a hard link of
# Debian's python3 outside PATH: a Flatcar-style guest loses /usr/bin/python3* (Flatcar has none;
# initramfs-init) and the agent keeps running.
mkdir -p "$root/usr/lib/metal-l2-agent"
ln "$root/usr/bin/$(readlink "$root/usr/bin/python3")" "$root/usr/lib/metal-l2-agent/python3"
install -m 0755 "$files/metal-l2-agent" "$root/usr/local/sbin/metal-l2-agent"
install -m 0644 "$files/metal-l2-agent.service" "$root/etc/systemd/system/metal-l2-agent.service"
ln -sf /etc/systemd/system/metal-l2-agent.service "$root/etc/systemd/system/multi-user.target.wants/metal-l2-agent.service"

# Boot faster: nothing here needs timers, gettys or file-system checks; cloud-init runs two stages
# instead of four (cloud.cfg moves their modules: init-local finds nothing NoCloud-net would not,
# and runcmd runs in the final stage right before scripts_user executes it).
for unit in cloud-init-local.service cloud-config.service serial-getty@.service getty-static.service \
  modprobe@dm_mod.service modprobe@fuse.service modprobe@loop.service systemd-sysusers.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer \
  getty@tty1.service systemd-logind.service systemd-update-utmp.service systemd-update-utmp-runlevel.service \
  keyboard-setup.service console-setup.service systemd-journal-flush.service cloud-init-hotplugd.socket \
  systemd-pstore.service dpkg-db-backup.timer; do
  ln -sf /dev/null "$root/etc/systemd/system/$unit"
done
echo 'metal-l2-guest' > "$root/etc/hostname"
printf '/dev/vda / ext4 rw,noatime 0 0\n' > "$root/etc/fstab"
printf '[Journal]\nStorage=volatile\n' > "$root/etc/systemd/journald.conf"
rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*

# A small initramfs: busybox (busybox-static) and the modules that mount the root (virtio disk,
# ext4), loaded in dependency order by a plain /init. initramfs-tools' udev-driven one spends
# most of its time waiting for udev under TCG.
init="$work/initramfs"
mkdir -p "$init/bin" "$init/lib/modules"
cp /bin/busybox "$init/bin/busybox"
for m in virtio_pci virtio_blk crc32c_generic ext4; do
  modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r path; do
  cp "$path" "$init/lib/modules/"
  basename "$path" >> "$init/lib/modules/order"
done
install -m 0755 "$files/initramfs-init" "$init/init"
(cd "$init" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd.img"

mkfs.ext4 -q -F -L metal-l2-root -d "$root" "$work/rootfs.ext4" 1G
cp "/boot/vmlinuz-$kver" "$work/vmlinuz"
mv "$work/rootfs.ext4" "$work/initrd.img" "$work/vmlinuz" "$out/"
