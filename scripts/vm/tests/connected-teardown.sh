#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Connected mode torn down under iperf3 in both directions: a mode switch
# (once more with receive completions held back), ifdown/ifup, removal of
# the RDMA device, rmmod; once with the shared receive queue and once
# without (no-SRQ: every QP's own receive buffers are in flight when it
# goes).  Closing the connections takes at most 10 s each time, and
# nothing is left behind (kmemleak and the kernel log are checked by the
# runner).
# vm-timeout: 1500
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

# $CPID and $SPID are the subshells of in0/in1: iperf3 itself is their
# child, and would go on running.
traffic_stop() {
	pkill -x iperf3 || true
	wait "$CPID" "$SPID" 2>/dev/null || true
}

connect_both() {
	set_mode ns0 "$IB0" connected
	set_mode ns1 "$IB1" connected
	in0 ip neigh flush dev "$IB0"
	in1 ip neigh flush dev "$IB1"
	in0 ping -c 1 -W 10 192.0.2.2 > /dev/null || fail "no ping in connected mode"
}

# A mode switch while receive completions wait, unpolled, in the receive
# CQ: napi_hold keeps the interface's NAPI from running until the teardown
# has begun (a few seconds).  Teardown must not destroy a QP while
# completions of it can still be polled: SRQ waits for Last WQE Reached
# and a drain marker, no-SRQ for every receive to come back.  Destroying
# first leaves the NAPI a completion of a freed QP (KASAN) or a ring with
# receives still out ("receives never completed"); the runner's log check
# fails either.
held_switch() {
	local p rx rv rx2 rv2 lines sm ms us uc end f

	# Only this flow: a faster one would empty the receive queue.
	! pgrep -x iperf3 > /dev/null || fail "iperf3 still running"
	# UDP over RC into $IB0: unlike TCP, it goes on when nothing is
	# delivered; slow enough (about 16 messages a second) that the
	# receive queue (256) is not empty before the checks below, each of
	# which takes a second or more on an emulated CPU.
	in0 iperf3 -s -p 5202 > /dev/null 2>&1 &
	us=$!
	wait_listening ns0 5202
	rx=$(cm_stat rxe0 rc_rx_bytes)
	in1 iperf3 -u -c 192.0.2.1 -p 5202 -b 1M -l 8000 -t 300 \
		> /dev/null 2>&1 &
	uc=$!
	wait_for 30 "UDP over RC into $IB0" sh -c \
		"[ \$(awk '\$1 == \"rc_rx_bytes\" {print \$2}' $(cm_debugfs rxe0)/stats) -gt $((rx + 200000)) ]"

	# The traffic stays off the held CPU.
	for p in $(pgrep -x iperf3); do
		taskset -a -p -c 0 "$p" > /dev/null
	done
	napi_hold ns0 "$IB0"
	rx=$(cm_stat rxe0 rc_rx_bytes)
	rv=$(rxe_stat rxe0 rdma_recvs)
	# Up to 12 s, polled every second: with the host busy, this CPU also
	# runs rxe and the sender (10 messages took longer than 5 s once);
	# the receive queue holds 256, 16 s of this flow.
	end=$((SECONDS + 12))
	rv2=$rv
	while [ "$rv2" -lt $((rv + 10)) ] && [ $SECONDS -lt $end ]; do
		sleep 1
		rv2=$(rxe_stat rxe0 rdma_recvs)
	done
	rx2=$(cm_stat rxe0 rc_rx_bytes)
	# Precondition: rxe0 completed receives, the driver polled none.
	say "held: rc_rx_bytes $rx -> $rx2, rxe0 rdma_recvs $rv -> $rv2"
	if [ "$rx2" != "$rx" ] || [ "$rv2" -lt $((rv + 10)) ]; then
		napi_release
		rdma statistic show link rxe0/1
		rdma statistic show link rxe1/1
		fail "receive completions were not held"
	fi
	lines=$(dmesg | wc -l)
	set_mode ns0 "$IB0" datagram &
	sm=$!
	# Precondition: the teardown began while they were held.  Polled
	# with builtins only: the reaper's drain gives up after 5 s.
	f=$(cm_debugfs rxe0)/connections
	end=$((SECONDS + 20))
	while [[ "$(< "$f")" == *" live "* ]]; do
		if [ $SECONDS -ge $end ]; then
			napi_release
			fail "the mode switch did not begin closing connections"
		fi
	done
	napi_resume
	wait "$sm" || fail "mode switch with completions held failed"
	napi_release
	pkill -x iperf3 || true
	wait "$uc" "$us" 2>/dev/null || true
	wait_for 30 "connected mode stopped" sh -c \
		"dmesg | tail -n +$((lines + 1)) | grep -q 'connected mode stopped'"
	ms=$(dmesg | tail -n +$((lines + 1)) |
	     sed -n 's/.*connected mode stopped: .* in \([0-9]*\) ms/\1/p')
	say "mode switch with receive completions held: connections closed in $ms ms"
}

# round SRQ: the five teardowns with cm_srq=SRQ.
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

	held_switch
	[ "$(cm_conns rxe0 | wc -l)" = 0 ] || fail "connections left after the held switch"
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
