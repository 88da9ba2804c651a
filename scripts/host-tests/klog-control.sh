#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Positive controls for the VM runner's kernel-log checks: a guest that
# leaks one object must fail the run with kmemleak's report, and one that
# raises a WARNING must fail it too.  A check that cannot fail proves
# nothing about the scenarios that pass it.
#
#   scripts/host-tests/klog-control.sh KDIR

set -euo pipefail
. "$(dirname "$0")/../lib.sh"

kdir=${1:?usage: klog-control.sh KDIR}
# Inside the checkout: the guest sees the host's /tmp as its own tmpfs.
tmp=$TOPDIR/out/klog-control
rm -rf "$tmp"
mkdir -p "$tmp"

cp "$TOPDIR"/scripts/tools/klog_control/{Kbuild,klog_control.c} "$tmp/"
make -s -C "$kdir" M="$tmp" modules > "$tmp/build.log" 2>&1 ||
	{ cat "$tmp/build.log"; die "the control module did not build"; }

# control WHAT FINDING: the run must fail, naming FINDING.
control() {
	local rc=0

	bash "$TOPDIR/scripts/vm-run.sh" -k "$kdir" -o "$tmp/vm-$1" -- \
		insmod "$tmp/klog_control.ko" what="$1" > "$tmp/$1.log" 2>&1 || rc=$?
	grep -q "insmod.*klog_control\|klog_control" "$tmp/vm-$1/dmesg" ||
		{ cat "$tmp/$1.log"; die "$1: the control module did not load"; }
	if [ $rc = 0 ] || ! grep -q "kernel log finding ($2)" "$tmp/$1.log"; then
		cat "$tmp/$1.log"
		die "$1: the run passed or did not name '$2' (status $rc)"
	fi
	echo "ok   $1: the run failed with: $(grep -A1 "kernel log finding ($2)" \
		"$tmp/$1.log" | tail -n1 | sed 's/^ *//')"
}

control leak 'unreferenced object'
control warn 'WARNING: '
