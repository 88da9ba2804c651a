#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian's linux-source-<version> package and unpack it into the cache.
#
#   scripts/debian-source.sh <version>       e.g. 6.1, 6.12, 7.2
#   scripts/debian-source.sh --mirror        the mirror it would use
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

# The first URI of the main Debian archive (not the security archive) in
# the system's apt sources: deb822 *.sources files or one-line
# sources.list and *.list files.  Besides http(s):// it accepts the
# mirror-list forms Debian's cloud images use (mirror+file:, mirror+http:),
# which the private configuration passes to apt unchanged.
# IPOIB_CM_APT_ETC (default /etc/apt) is where to look; the mirror tests
# point it at samples.
system_mirror() {
	local etc=${IPOIB_CM_APT_ETC:-/etc/apt} f uris=() looked=()

	for f in "$etc"/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		looked+=("$f")
		# Each stanza's URIs, when its Types include deb.
		mapfile -t -O ${#uris[@]} uris < <(awk '
			function flush() { if (deb) print uris; deb = 0; uris = "" }
			/^[ \t]*$/ { flush(); next }
			/^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			/^URIs:/ { for (i = 2; i <= NF; i++) uris = uris " " $i }
			END { flush() }' "$f" | tr ' ' '\n' | grep .)
	done
	for f in "$etc"/sources.list "$etc"/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		looked+=("$f")
		mapfile -t -O ${#uris[@]} uris < <(sed -e 's/#.*//' \
			-e 's/\[[^]]*\]//' "$f" | awk '$1 == "deb" { print $2 }')
	done
	for f in "${uris[@]}"; do
		case $f in
		*security*) continue ;;
		http://*/debian|http://*/debian/|https://*/debian|https://*/debian/|\
		mirror+*debian*|mirror://*debian*)
			echo "${f%/}"
			return 0 ;;
		esac
	done
	echo "error: no Debian archive found in the apt sources;" \
		"looked at: ${looked[*]:-nothing under $etc}" \
		"(URIs seen: ${uris[*]:-none})" >&2
	return 1
}

if [ "${1:-}" = --mirror ]; then
	system_mirror
	exit
fi

aptdir=$CACHE/apt
mkdir -p "$aptdir/lists/partial" "$aptdir/archives/partial" "$aptdir/parts"
mirror=$(system_mirror) || exit 1
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
