#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the test VM (see vm-run.sh): mount what a test needs on top of
# the read-only host root, run the job, collect the kernel's findings and
# reboot (QEMU runs with -no-reboot, so that ends the VM).

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# The checkout this script belongs to may itself live under one of the
# directories that become tmpfs (a CI clone in /tmp, say): carry it over.
topdir=$(cd "$(dirname "$0")/.." && pwd)
for d in /tmp /run /var/tmp /var/lib /var/log /root; do
	case $topdir/ in
	"$d"/*)
		mount --bind "$topdir" /mnt
		mount -t tmpfs tmpfs "$d"
		mkdir -p "$topdir"
		mount --move /mnt "$topdir"
		;;
	*)
		mount -t tmpfs tmpfs "$d"
		;;
	esac
done
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /tmp/vmout /run/netns
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 vmout /tmp/vmout
ip link set lo up
hostname ipoib-vm 2>/dev/null

# kmemleak is not cleared here: "clear" only forgets objects a scan has
# reported, which takes two scans some seconds apart (about 15 s under
# TCG), and boot has never left a suspect.  One would be reported below
# and fail the run.
kmemleak=/sys/kernel/debug/kmemleak

# Under TCG a vCPU can keep executing the breakpoint the kernel wrote while
# flipping a static key (text_poke_bp) after the patch is done; Debian's
# 6.1 then sends it back to that breakpoint for good.  Most likely what
# stopped both CPUs of a stock-kernel guest at a netstamp_needed_key site
# in netif_receive_skb_list_internal() (2026-12-07) while ping turned
# SO_TIMESTAMP on and off.  A socket holding SO_TIMESTAMP for the VM's
# life keeps that key on: ping no longer flips it.
python3 -c 'import signal, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_TIMESTAMP, 1)
signal.pause()' < /dev/null > /dev/null 2>&1 &

echo "vm-init: running job" > /dev/kmsg
bash /tmp/vmout/job.sh < /dev/null > /dev/console 2>&1
rc=$?
echo "vm-init: job finished with status $rc" > /dev/kmsg

# vm-run.sh leaves expect-kmemleak when the kernel has kmemleak: then a
# report is owed, and a scan that cannot run is a finding.
if [ -f /tmp/vmout/expect-kmemleak ] && [ ! -w $kmemleak ]; then
	echo "kmemleak: scan failed: $kmemleak is missing" > /dev/kmsg
elif [ -w $kmemleak ]; then
	# kmemleak reports an object once a scan finds it unreferenced and
	# unchanged since the previous scan, and older than five seconds:
	# scan now, and again when the job's last objects are old enough.
	end=$(cut -d. -f1 /proc/uptime)
	echo "vm-init: kmemleak scans" > /dev/kmsg
	echo scan > $kmemleak ||
		echo "kmemleak: scan failed: first scan" > /dev/kmsg
	left=$((end + 7 - $(cut -d. -f1 /proc/uptime)))
	[ $left -le 0 ] || sleep $left
	echo scan > $kmemleak ||
		echo "kmemleak: scan failed: second scan" > /dev/kmsg
	cat $kmemleak > /tmp/vmout/kmemleak
	echo "vm-init: kmemleak done" > /dev/kmsg
fi
dmesg > /tmp/vmout/dmesg
echo $rc > /tmp/vmout/rc
sync
echo b > /proc/sysrq-trigger
sleep 10
