#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian's linux-source-<version> package and unpack it into the cache.
#
#   scripts/debian-source.sh <version>       e.g. 6.1, 6.12, 7.2
#
# Prints the path of the unpacked source tree on stdout.  Packages from
# bookworm, trixie and sid are reached through a private apt configuration
# under the cache directory, built from the Debian mirror that the
# machine's own apt sources already use; the system's sources are read,
# never changed.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

version=${1:?usage: debian-source.sh <version>}
pkg=linux-source-$version
srcdir=$CACHE/src/$pkg

if [ -f "$srcdir/.unpacked" ]; then
	echo "$srcdir"
	exit 0
fi

# The first Debian archive URI configured for the main archive (not the
# security archive), in either the deb822 or the one-line format.
system_mirror() {
	local f uri=""

	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' "$f" |
		      grep -v -- '-security' | grep '/debian/\?$' | head -n1) || true
		[ -n "$uri" ] && break
	done
	if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
		uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++)
				if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' \
			/etc/apt/sources.list | grep -v -- '-security' | head -n1) || true
	fi
	[ -n "$uri" ] || die "no Debian mirror found in the system's apt sources"
	echo "$uri"
}

aptdir=$CACHE/apt
mkdir -p "$aptdir/lists/partial" "$aptdir/archives/partial" "$aptdir/parts"
mirror=$(system_mirror)
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
: > "$aptdir/sources.list"
for suite in bookworm trixie sid; do
	echo "deb [signed-by=$keyring] $mirror $suite main" >> "$aptdir/sources.list"
done

apt_private() {
	apt-get -q \
		-o Dir::Etc::SourceList="$aptdir/sources.list" \
		-o Dir::Etc::SourceParts="$aptdir/parts" \
		-o Dir::State::Lists="$aptdir/lists" \
		-o Dir::Cache::Archives="$aptdir/archives" \
		-o Dir::Cache::pkgcache="$aptdir/pkgcache.bin" \
		-o Dir::Cache::srcpkgcache="$aptdir/srcpkgcache.bin" \
		-o APT::Get::List-Cleanup=false \
		-o APT::Sandbox::User=root \
		"$@"
}

# Refresh the private lists at most once a day.
stamp=$aptdir/lists/.updated
if [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mmin +1440)" ]; then
	log "updating the private apt lists (bookworm, trixie, sid)"
	apt_private update >&2
	touch "$stamp"
fi

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
