#!/usr/bin/env bash
# Unpack Debian's cloud-init (and the Python modules it imports that Debian's python3 lacks) into
# ~/.cache/metal-l2/cloud-init/<version>/, without installing anything system-wide. Prints the
# directory to put on PYTHONPATH. Needs apt-get (download only) and dpkg-deb; cached by version.
set -euo pipefail

root="${METAL_L2_CACHE:-$HOME/.cache/metal-l2}/cloud-init"
# The version apt would install (Debian 12: 22.4.2-1+deb12u*), or CLOUD_INIT_VERSION.
version="${CLOUD_INIT_VERSION:-$(apt-cache policy cloud-init 2>/dev/null | awk '/Candidate:/ {print $2}')}"
if [ -z "$version" ] || [ "$version" = "(none)" ]; then
  # No package lists: use a version unpacked before, if any.
  cached="$(ls -d "$root"/*/.complete 2>/dev/null | sort | tail -n 1)"
  if [ -z "$cached" ]; then
    echo "cloud-init is not known to apt; run 'apt-get update' first (Debian 12 package lists are needed)" >&2
    exit 1
  fi
  version="$(basename "$(dirname "$cached")")"
fi
cache="$root/$version"
site="$cache/root/usr/lib/python3/dist-packages"

if [ -f "$cache/.complete" ]; then
  echo "$site"
  exit 0
fi

# cloud-init and its Python dependencies (Debian 12 names); python3-yaml, -oauthlib and -six are
# part of Debian's python3 already, but unpacking them again is harmless if they are listed.
packages=(
  "cloud-init=$version"
  python3-jinja2 python3-markupsafe python3-configobj python3-jsonpatch python3-json-pointer
  python3-jsonschema python3-attr python3-pyrsistent python3-requests python3-urllib3 python3-idna
  python3-certifi python3-chardet python3-charset-normalizer python3-netifaces python3-serial
  python3-yaml
)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"  # apt's _apt user downloads into it
(cd "$work" && apt-get download -q "${packages[@]}" >&2) || {
  echo "apt-get download failed; run 'apt-get update' first (Debian 12 package lists are needed)" >&2
  exit 1
}
rm -rf "$cache"
mkdir -p "$cache/root"
for deb in "$work"/*.deb; do
  dpkg-deb -x "$deb" "$cache/root"
done
/usr/bin/python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import cloudinit.user_data, jinja2' "$site"
touch "$cache/.complete"
echo "$site"
