#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Parameters out of range are refused at load, each with its message; the
# module loads, binds to every RoCE port it finds, follows devices coming
# and going, and unloads.
. "$(dirname "$0")/../lib.sh"

# refused "PARAM=VALUE" MESSAGE: insmod fails, says why, loads nothing.
refused() {
	if load_module "$1" 2> /tmp/insmod.err; then
		fail "insmod accepted $1"
	fi
	[ ! -d /sys/module/ipoib_cm ] || fail "$1: the module stayed loaded"
	dmesg | matches "ipoib_cm: $2" || fail "$1: no \"$2\" in the kernel log"
	say "$1 refused: $2"
}

fabric_single
ibv_devinfo -d rxe0 | matches PORT_ACTIVE || fail "ibv_devinfo: rxe0 not active"

refused cm_nosrq_mem=0 "cm_nosrq_mem must be at least 1 (MiB)"
refused recv_queue_size=8 "recv_queue_size must be between 16 and 8192, not 8"
refused default_mode=fast 'default_mode must be "datagram" or "connected"'

load_module
for dev in rxe0 rxe1; do
	[ "$(klog_count "$dev: ipoib_cm: port 1: RoCE, state ACTIVE, active MTU 4096")" = 1 ] ||
		fail "$dev was not reported exactly once"
done
grep -qw ipoib_cm /proc/modules || fail "module not listed"

rdma link del rxe1
[ "$(klog_count 'rxe1: ipoib_cm: device removed')" = 1 ] ||
	fail "removal of rxe1 not seen"

rdma link add rxe1 type rxe netdev veth1
wait_for 60 "rxe1 active again" rxe_active rxe1
[ "$(klog_count 'rxe1: ipoib_cm: port 1: RoCE')" = 2 ] ||
	fail "rxe1 not reported again after it came back"

unload_module
[ "$(klog_count 'ipoib_cm: device removed')" = 3 ] ||
	fail "unload did not release both devices"
say "module-load: ok"
