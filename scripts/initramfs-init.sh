#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the initramfs that scripts/stock-kernel.sh builds for Debian
# 12's stock kernel, run by busybox's ash.  In that kernel 9p and virtio
# PCI are modules, so the host root cannot be the kernel's own root mount
# as it is for the kernels the project builds.  This script:
#
# 1. loads the modules listed in /etc/modules-load (9p and virtio PCI with
#    their dependencies, in load order);
# 2. mounts the root the kernel command line names, as the kernel would:
#    root= (the 9p mount tag), rootfstype=, rootflags=, ro or rw;
# 3. lays the kernel's own modules over /lib/modules/<release> of that
#    root: the host root is read-only and holds none for this kernel, so a
#    tmpfs goes over its /lib/modules and the directory that
#    stock_modules= names (a path on the host root: the cache's unpacked
#    lib/modules/<release>) is bound there, for modprobe in the guest;
# 4. hands over with switch_root to init= (scripts/vm-init.sh), with the
#    arguments the kernel gave this script.
#
# A failure ends this script: the kernel panics, and with panic=-1 and
# QEMU's -no-reboot that ends the VM.

PATH=/bin
export PATH

fail() {
	echo "initramfs: $*" >&2
	exit 1
}

mount -t proc proc /proc || fail "cannot mount /proc"
mount -t sysfs sysfs /sys || fail "cannot mount /sys"
mount -t devtmpfs devtmpfs /dev || fail "cannot mount /dev"

root=
fstype=9p
flags=
mode=ro
init=/sbin/init
modules=
# The command line's words, unglobbed.
set -f
# shellcheck disable=SC2013
for arg in $(cat /proc/cmdline); do
	case $arg in
	root=*)		root=${arg#root=} ;;
	rootfstype=*)	fstype=${arg#rootfstype=} ;;
	rootflags=*)	flags=${arg#rootflags=} ;;
	ro|rw)		mode=$arg ;;
	init=*)		init=${arg#init=} ;;
	stock_modules=*) modules=${arg#stock_modules=} ;;
	esac
done
set +f
[ -n "$root" ] || fail "no root= on the kernel command line"
[ -n "$modules" ] || fail "no stock_modules= on the kernel command line"

while read -r mod; do
	[ -n "$mod" ] || continue
	insmod "$mod" || fail "cannot load $mod"
done < /etc/modules-load

# virtio PCI binds its devices as its module loads; the retries only
# cover a slow probe.
tries=0
until mount -t "$fstype" -o "$mode${flags:+,$flags}" "$root" /newroot; do
	tries=$((tries + 1))
	[ $tries -lt 10 ] || fail "cannot mount $root ($fstype, $mode,$flags)"
	sleep 1
done

release=$(uname -r)
[ -f "/newroot$modules/modules.dep" ] ||
	fail "no modules.dep in $modules on the root file system"
mount -t tmpfs -o mode=0755 tmpfs /newroot/lib/modules ||
	fail "cannot mount a tmpfs on /lib/modules"
if ! mkdir "/newroot/lib/modules/$release" ||
   ! mount -o bind "/newroot$modules" "/newroot/lib/modules/$release"; then
	fail "cannot bind $modules on /lib/modules/$release"
fi

[ -x "/newroot$init" ] || fail "init $init is not executable on the root"
umount /proc
umount /sys
mount -o move /dev /newroot/dev || fail "cannot move /dev"
exec switch_root /newroot "$init" "$@"
