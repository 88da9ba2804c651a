#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian's linux-source-<version> package and unpack it into the cache.
#
#   scripts/debian-source.sh <version>       e.g. 6.1, 6.12, 7.2
#   scripts/debian-source.sh --mirror        the mirror it would use
#   scripts/debian-source.sh --security-mirror   and the security archive
#
# Prints the path of the unpacked source tree on stdout.  Packages from
# bookworm, trixie and sid are reached through the private apt
# configuration of debian-apt.sh, built from the Debian mirror that the
# machine's own apt sources already use; the system's sources are read,
# never changed.

set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/debian-apt.sh"

case ${1:-} in
--mirror)
	system_mirror archive
	exit ;;
--security-mirror)
	system_mirror security
	exit ;;
esac

version=${1:?usage: debian-source.sh <version>}
pkg=linux-source-$version
srcdir=$CACHE/src/$pkg

if [ -f "$srcdir/.unpacked" ]; then
	echo "$srcdir"
	exit 0
fi

apt_private_setup

work=$CACHE/src/.download-$version
rm -rf "$work"
mkdir -p "$work"
log "downloading $pkg"
(cd "$work" && apt_private download "$pkg" >&2)
deb=$(ls "$work"/"$pkg"_*.deb)
dpkg-deb -x "$deb" "$work/root"
tarball=$(ls "$work"/root/usr/src/"$pkg".tar.*)
log "unpacking $(basename "$tarball")"
rm -rf "$srcdir"
mkdir -p "$srcdir"
tar -xf "$tarball" -C "$srcdir" --strip-components=1
dpkg-deb -f "$deb" Version > "$srcdir/.debian-version"
rm -rf "$work"
touch "$srcdir/.unpacked"
echo "$srcdir"
