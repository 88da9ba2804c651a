#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the module the way an administrator's DKMS would (dkms add, dkms
# build, with the top-level dkms.conf) against one kernel's headers, in a
# private DKMS tree under a temporary directory, removed afterwards: the
# system's /var/lib/dkms and /usr/src are not touched, and so is not the
# default module signing key (a throw-away one signs the module).
#
#   scripts/dkms-build.sh KDIR

set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=$(realpath "${1:?usage: dkms-build.sh KDIR}")
# The release the kernel reports (uname -r), what DKMS keys builds on.
kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
	"$kdir/include/generated/utsrelease.h")
[ -n "$kver" ] || die "no UTS_RELEASE in $kdir"
name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"$/\1/p' "$TOPDIR/dkms.conf")
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$TOPDIR/dkms.conf")
[ -n "$name" ] && [ -n "$version" ] || die "no PACKAGE_NAME/PACKAGE_VERSION in dkms.conf"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src/$name-$version
mkdir -p "$src/kunit" "$tmp/dkms" "$tmp/install"
# What a release tarball would hold: the sources, no build or test output.
cp "$TOPDIR"/dkms.conf "$TOPDIR"/Kbuild "$TOPDIR"/Makefile "$TOPDIR"/*.[ch] "$src/"
cp "$TOPDIR"/kunit/Kbuild "$TOPDIR"/kunit/*.[ch] "$src/kunit/"

# dkms reads these from the environment when framework.conf does not set
# them: sign with a key of our own instead of creating /var/lib/dkms/mok.*.
export mok_signing_key=$tmp/mok.key mok_certificate=$tmp/mok.pub
opts=(--sourcetree "$tmp/src" --dkmstree "$tmp/dkms" --installtree "$tmp/install")

dkms add -m "$name" -v "$version" "${opts[@]}"
if ! dkms build -m "$name" -v "$version" -k "$kver" \
	--kernelsourcedir "$kdir" "${opts[@]}"; then
	cat "$tmp/dkms/$name/$version/build/make.log" 2>/dev/null || true
	exit 1
fi
dkms status -m "$name" -v "$version" "${opts[@]}"
ko=$(find "$tmp/dkms/$name/$version/$kver" -name "$name.ko*" | sed -n 1p)
[ -n "$ko" ] || die "dkms build made no $name.ko for $kver"
case $ko in
*.xz) xz -dc "$ko" > "$tmp/$name.ko" ;;
*.zst) zstd -qdc "$ko" > "$tmp/$name.ko" ;;
*.gz) gzip -dc "$ko" > "$tmp/$name.ko" ;;
*) cp "$ko" "$tmp/$name.ko" ;;
esac
magic=$(modinfo -F vermagic "$tmp/$name.ko")
echo "built $ko: vermagic $magic"
[ "${magic%% *}" = "$kver" ] || die "vermagic $magic is not for $kver"
