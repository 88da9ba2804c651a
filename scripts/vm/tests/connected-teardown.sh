#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Connected mode torn down under iperf3 in both directions: a mode switch,
# ifdown/ifup, removal of the RDMA device, rmmod; once with the shared
# receive queue and once without (no-SRQ: every QP's own receive buffers
# are in flight when it goes).  Closing the connections takes at most 10 s
# each time, and nothing is left behind (kmemleak and the kernel log are
# checked by the runner).
. "$(dirname "$0")/../lib.sh"

# Run a teardown command under traffic.  The kernel reports how long
# closing the connections took ("connected mode stopped: N connections
# closed in T ms"): each such report must be at most 10 s.  The command as
# a whole, process start-up on a saturated emulated CPU included, must end
# within 60 s; for rmmod, rmmod's own time (RMMOD_SECS, unload_module),
# as the checks around it start several processes, which under this load
# takes tens of seconds.
within_10s() {
	local what=$1 start took lines ms
	shift
	lines=$(dmesg | wc -l)
	start=$(date +%s.%N)
	"$@" || fail "$what failed"
	took=$(echo "$(date +%s.%N) - $start" | bc)
	if [ -n "${RMMOD_SECS:-}" ]; then
		say "$what: rmmod ran ${RMMOD_SECS}s"
		took=$RMMOD_SECS
		unset RMMOD_SECS
	fi
	ms=$(dmesg | tail -n +$((lines + 1)) |
	     sed -n 's/.*connected mode stopped: .* in \([0-9]*\) ms/\1/p')
	say "$what: command took ${took}s; connections closed in ${ms//$'\n'/, } ms"
	[ -n "$ms" ] || fail "$what: connected mode did not stop"
	for t in $ms; do
		[ "$t" -le 10000 ] || fail "$what: closing took $t ms"
	done
	[ "$(echo "$took <= 60" | bc)" = 1 ] || fail "$what took ${took}s"
}

traffic_start() {
	in1 iperf3 -s > /dev/null 2>&1 &
	SPID=$!
	wait_listening ns1 5201
	in0 iperf3 -c 192.0.2.2 -t 300 --bidir > /dev/null 2>&1 &
	CPID=$!
	# Until data flows over RC both ways.
	local rx0 rx1
	rx0=$(cm_stat rxe0 rc_rx_bytes)
	rx1=$(cm_stat rxe1 rc_rx_bytes)
	wait_for 30 "RC traffic" sh -c \
		"[ \$(awk '\$1 == \"rc_rx_bytes\" {print \$2}' $(cm_debugfs rxe0)/stats) -gt $((rx0 + 1000000)) ] &&
		 [ \$(awk '\$1 == \"rc_rx_bytes\" {print \$2}' $(cm_debugfs rxe1)/stats) -gt $((rx1 + 1000000)) ]"
	sleep 2
}

traffic_stop() {
	kill "$CPID" "$SPID" 2>/dev/null || true
	wait "$CPID" "$SPID" 2>/dev/null || true
}

connect_both() {
	set_mode ns0 "$IB0" connected
	set_mode ns1 "$IB1" connected
	in0 ip neigh flush dev "$IB0"
	in1 ip neigh flush dev "$IB1"
	in0 ping -c 1 -W 10 192.0.2.2 > /dev/null || fail "no ping in connected mode"
}

# round SRQ: the four teardowns with cm_srq=SRQ.
round() {
	local srq=$1

	say "== cm_srq=$srq"
	load_module cm_srq="$srq"
	hosts_up
	connect_both
	# Precondition: the receive backend asked for is the one in use.
	if [ "$srq" = 1 ]; then
		srq_check rxe0 srq
	else
		srq_check rxe0 none
	fi

	traffic_start
	within_10s "mode switch to datagram under traffic" set_mode ns0 "$IB0" datagram
	traffic_stop
	[ "$(cm_conns rxe0 | wc -l)" = 0 ] || fail "connections left after the switch"
	connect_both

	traffic_start
	within_10s "ifdown under traffic" ip -n ns1 link set "$IB1" down
	ip -n ns1 link set "$IB1" up
	wait_for 60 "carrier on $IB1" carrier_up ns1 "$IB1"
	traffic_stop
	in0 ping -c 1 -W 20 192.0.2.2 > /dev/null || fail "no ping after ifup"

	traffic_start
	within_10s "rdma link del rxe1 under traffic" rdma link del rxe1
	traffic_stop
	rdma link add rxe1 type rxe netdev veth1
	wait_for 60 "rxe1 active" rxe_active rxe1
	wait_for 30 "interface on rxe1" ipoib_if_of rxe1
	# The survivor closes what pointed at the removed device.
	wait_for 60 "connections to rxe1 closed" sh -c \
		"! grep -q live $(cm_debugfs rxe0)/connections"

	# rmmod with both interfaces connected and busy.
	IB1=$(ipoib_if_of rxe1)
	ip netns del ns1
	ip netns add ns1
	ip link set "$IB1" netns ns1
	ip -n ns1 addr add 192.0.2.2/24 dev "$IB1"
	ip -n ns1 link set "$IB1" up
	wait_for 60 "carrier on $IB1" carrier_up ns1 "$IB1"
	connect_both
	traffic_start
	within_10s "rmmod under traffic" unload_checked
	traffic_stop
	hosts_down
}

fabric_single
round 1
round 0
say "connected-teardown: ok"
