# SPDX-License-Identifier: GPL-2.0
# Helpers for the scenarios that run inside the test VM.  Sourced.
#
# IPOIB_CM_MODDIR names the directory holding the ipoib_cm.ko built for the
# running kernel (and kunit/ipoib_cm_kunit.ko).

set -euo pipefail

MODDIR=${IPOIB_CM_MODDIR:?IPOIB_CM_MODDIR is not set}
VMOUT=/tmp/vmout

say() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }
fail() { say "FAIL: $*"; exit 1; }

# Poll until a command succeeds; fail after $1 seconds.
wait_for() {
	local secs=$1 what=$2
	shift 2
	local end=$((SECONDS + secs))

	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || fail "timed out after ${secs}s waiting for $what"
		sleep 0.2
	done
}

rxe_active() {
	rdma link show "$1/1" | grep -q 'state ACTIVE'
}

# Single-VM fabric: veth0 <-> veth1 (MTU 9000, so rxe uses IB MTU 4096),
# rxe0 on veth0 and rxe1 on veth1.  Both veths stay in init_net (rxe needs
# that); the IPoIB interfaces are moved into namespaces ns0/ns1 by the
# scenarios that pass traffic.
fabric_single() {
	sysctl -qw net.ipv4.conf.all.accept_local=1
	sysctl -qw net.ipv4.conf.all.rp_filter=0
	sysctl -qw net.ipv4.conf.default.rp_filter=0
	sysctl -qw net.ipv6.conf.default.accept_dad=0
	ip link add veth0 mtu 9000 type veth peer name veth1 mtu 9000
	ip link set veth0 up
	ip link set veth1 up
	rdma link add rxe0 type rxe netdev veth0
	rdma link add rxe1 type rxe netdev veth1
	wait_for 60 "rxe0 active" rxe_active rxe0
	wait_for 60 "rxe1 active" rxe_active rxe1
	say "fabric up: rxe0 on veth0, rxe1 on veth1"
}

load_module() {
	insmod "$MODDIR/ipoib_cm.ko" "$@"
}

unload_module() {
	rmmod ipoib_cm
}

# Count kernel-log lines matching an extended regular expression.
klog_count() {
	dmesg | grep -cE -- "$1" || true
}
