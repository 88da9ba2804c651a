#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian 12's stock kernel and make it bootable under QEMU with the
# host root over 9p (scripts/vm-run.sh -k DIR), and buildable against.
#
#   scripts/stock-kernel.sh
#
# Prints the path of a cache directory, $IPOIB_CM_CACHE/stock/<version>,
# keyed by the Debian version of the newest linux-image-amd64 in bookworm,
# bookworm-updates and bookworm-security (reached through the private apt
# configuration of debian-apt.sh; IPOIB_CM_STOCK_VERSION=<version> asks
# for another one).  It holds:
#
#   vmlinuz, config, System.map   links into image/boot
#   image/              linux-image-<release> unpacked; its modules are
#                       image/lib/modules/<release>, with depmod's index
#   headers/            linux-headers-<release>, linux-headers-*-common and
#                       linux-kbuild-* unpacked, absolute links made
#                       relative and the Makefile's include pointed here
#   kdir                link to the headers' KDIR (for build-module.sh,
#                       dkms-build.sh)
#   initramfs.cpio.gz   busybox-static's busybox with its applet links,
#                       the modules the 9p root needs (below, with their
#                       dependencies from modules.dep, in load order in
#                       /etc/modules-load) and scripts/initramfs-init.sh as
#                       /init; initramfs.list is its listing (cpio -t)
#   versions            the Debian packages and versions used
#   .stock-kernel       the release (uname -r): marks a stock kernel
#                       directory for vm-run.sh
#
# The .debs stay in $IPOIB_CM_CACHE/stock/debs.  Everything is made in a
# temporary directory and renamed into place when complete, so a run that
# was interrupted leaves nothing half-made behind.  A second run only
# reads the apt lists (refreshed at most once a day) and finds the
# directory; the initramfs alone is made again when this script, the init
# script or the busybox-static version change.

set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/debian-apt.sh"

# What /init loads before it can mount the root and the output share: 9p
# over virtio PCI.  Their dependencies come from the kernel's modules.dep;
# one built into the kernel is left out.
initramfs_modules=(virtio_pci 9pnet_virtio 9p)
suites="bookworm|bookworm-updates|bookworm-security"
init_script=$TOPDIR/scripts/initramfs-init.sh

stock=$CACHE/stock
debs=$stock/debs
mkdir -p "$debs"
# One run at a time; a second caller waits and then finds the result.
exec 9> "$stock/.lock"
flock 9
# What a run that was killed left: downloads and initramfs parts.
rm -rf "$debs"/.download.* "$stock"/*/.initramfs.*

apt_private_setup
meta=${IPOIB_CM_STOCK_VERSION:-$(apt_newest linux-image-amd64 "$suites")}
# linux-image-amd64 depends on "linux-image-<release> (= <version>)".
dep=$(apt_cache_private show "linux-image-amd64=$meta" |
	sed -n 's/^Depends: \(linux-image-[^ ,]*\) (= \([^)]*\)).*/\1 \2/p' |
	sed -n 1p)
[ -n "$dep" ] || die "linux-image-amd64 $meta names no linux-image-<release> (= version)"
read -r image version <<< "$dep"
release=${image#linux-image-}
headers=linux-headers-$release
common=linux-headers-${release%-*}-common
kbuild=$(apt_cache_private show "$headers=$version" |
	sed -n 's/^Depends: .*\(linux-kbuild-[0-9.]*\).*/\1/p' | sed -n 1p)
[ -n "$kbuild" ] || die "$headers $version depends on no linux-kbuild-*"
busybox_version=$(apt_newest busybox-static "$suites")

out=$stock/$version
key=$(cat "$TOPDIR/scripts/stock-kernel.sh" "$init_script" \
	<(echo "busybox-static $busybox_version") | sha256sum | cut -c1-12)
if [ -f "$out/.stock-kernel" ] &&
   [ "$(cat "$out/initramfs.key" 2>/dev/null)" = "$key" ]; then
	echo "$out"
	exit 0
fi

apt_fetch "$debs" "$image=$version" "$headers=$version" "$common=$version" \
	"$kbuild=$version" "busybox-static=$busybox_version"
deb() {
	ls "$debs/${1}_${2/:/%3a}_"*.deb
}

# The kernel, its modules and its headers: made once per version.
if [ ! -f "$out/.stock-kernel" ]; then
	tmp=$out.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	start=$SECONDS
	log "unpacking $image $version"
	dpkg-deb -x "$(deb "$image" "$version")" "$tmp/image"
	moddir=image/lib/modules/$release
	[ -d "$tmp/$moddir/kernel" ] || die "$image has no lib/modules/$release"
	# The package leaves the index to its postinst.
	depmod -b "$tmp/image" "$release"
	for f in vmlinuz config System.map; do
		[ -f "$tmp/image/boot/$f-$release" ] || die "$image has no boot/$f-$release"
		ln -s "image/boot/$f-$release" "$tmp/$f"
	done

	log "unpacking $headers, $common and $kbuild"
	for p in "$headers" "$common" "$kbuild"; do
		dpkg-deb -x "$(deb "$p" "$version")" "$tmp/headers"
	done
	# Absolute links (lib/modules/<release>/build, source) point into
	# the unpacked tree instead.
	while IFS= read -r l; do
		target=$(readlink "$l")
		ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" \
			"$tmp/headers$target")" "$l"
	done < <(find "$tmp/headers" -type l -lname '/*')
	# The flavour's Makefile includes the common one by its absolute path.
	kdir=headers/usr/src/$headers
	sed -i "s|^include /usr/src/|include $out/headers/usr/src/|" \
		"$tmp/$kdir/Makefile"
	grep -qxF "include $out/headers/usr/src/$common/Makefile" "$tmp/$kdir/Makefile" ||
		die "unexpected $kdir/Makefile: $(head -n1 "$tmp/$kdir/Makefile")"
	ln -s "$kdir" "$tmp/kdir"

	printf '%s %s\n' "$image" "$version" "$headers" "$version" \
		"$common" "$version" "$kbuild" "$version" > "$tmp/versions"
	echo "$release" > "$tmp/.stock-kernel"
	mv "$tmp" "$out"
	log "$image $version unpacked in $((SECONDS - start)) s"
fi

# The initramfs, made apart and renamed into place.
log "making the initramfs (busybox-static $busybox_version)"
work=$(mktemp -d "$out/.initramfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
ir=$work/root
mkdir -p "$ir"/{bin,dev,etc,proc,sys,newroot} "$work/busybox"
dpkg-deb -x "$(deb busybox-static "$busybox_version")" "$work/busybox"
cp "$work/busybox/bin/busybox" "$ir/bin/busybox"
for applet in $("$ir/bin/busybox" --list); do
	[ "$applet" = busybox ] || ln -s busybox "$ir/bin/$applet"
done
for applet in sh mount insmod switch_root; do
	[ -L "$ir/bin/$applet" ] || die "busybox-static $busybox_version has no $applet"
done
# The console /init starts with, before it mounts devtmpfs.
mknod -m 600 "$ir/dev/console" c 5 1
mknod -m 666 "$ir/dev/null" c 1 3

# The modules, dependencies first, by modules.dep: "path: dep dep ...",
# paths relative to lib/modules/<release>.
moddir=$out/image/lib/modules/$release
declare -A path deps seen
while IFS=: read -r m d; do
	n=${m##*/}
	n=${n%%.ko*}
	path[${n//-/_}]=$m
	deps[$m]=$d
done < "$moddir/modules.dep"
order=()
visit() {
	local m=$1 d

	[ -z "${seen[$m]:-}" ] || return 0
	seen[$m]=1
	for d in ${deps[$m]}; do
		visit "$d"
	done
	order+=("$m")
}
for n in "${initramfs_modules[@]}"; do
	if [ -n "${path[$n]:-}" ]; then
		visit "${path[$n]}"
	elif grep -q "/$n\.ko$" "$moddir/modules.builtin"; then
		log "$n is built into $release"
	else
		die "$n is no module of $release"
	fi
done
: > "$ir/etc/modules-load"
for m in "${order[@]}"; do
	# busybox's insmod wants them uncompressed.
	dest=lib/modules/$release/${m%.[gx]z}
	dest=${dest%.zst}
	mkdir -p "$(dirname "$ir/$dest")"
	case $m in
	*.xz)	xz -dc "$moddir/$m" > "$ir/$dest" ;;
	*.gz)	gzip -dc "$moddir/$m" > "$ir/$dest" ;;
	*.zst)	zstd -qdc "$moddir/$m" > "$ir/$dest" ;;
	*)	cp "$moddir/$m" "$ir/$dest" ;;
	esac
	echo "/$dest" >> "$ir/etc/modules-load"
done

install -m 755 "$init_script" "$ir/init"
"$ir/bin/busybox" sh -n "$ir/init" || die "$init_script: not valid for busybox sh"

(cd "$ir" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet) | gzip -9n > "$work/initramfs.cpio.gz"
gzip -dc "$work/initramfs.cpio.gz" | cpio -t --quiet > "$work/initramfs.list"
# The archive holds what /init needs: itself, the shell, every module it
# loads.
for f in init bin/busybox bin/sh dev/console \
	$(sed 's|^/||' "$ir/etc/modules-load"); do
	grep -qxF "$f" "$work/initramfs.list" || die "initramfs lacks $f"
done
{
	grep -v '^busybox-static ' "$out/versions" || true
	echo "busybox-static $busybox_version"
} > "$work/versions"
echo "$key" > "$work/initramfs.key"
# The key last: an interrupted run leaves an old key, and the next run
# makes the initramfs again.
mv "$work/initramfs.cpio.gz" "$work/initramfs.list" "$work/versions" "$out/"
mv "$work/initramfs.key" "$out/initramfs.key"
log "initramfs: $(stat -c %s "$out/initramfs.cpio.gz") bytes," \
	"${#order[@]} modules"
echo "$out"
