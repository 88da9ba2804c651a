#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Churn on an SMP guest, with the shared receive queue and without: for
# CHURN_SECS seconds (default 90) a cycle of mode switches on either side,
# a link bounce, and connected-mode children created, dialled over RC and
# deleted, all under iperf3 in both directions.  Then both sides in
# connected mode must carry an exact transfer each way over RC (length and
# SHA-256), and rmmod must leave nothing behind.  The runner fails the run
# on any kernel log finding (KASAN, lockdep, the module's own warnings)
# and on kmemleak.
# vm-timeout: 1200
. "$(dirname "$0")/../lib.sh"

CHURN_SECS=${CHURN_SECS:-90}

traffic_start() {
	in1 iperf3 -s > /dev/null 2>&1 &
	SPID=$!
	wait_listening ns1 5201
	# Connections break while the interfaces churn: iperf3 is restarted
	# whenever it ends (its result is not the point; the load is).
	(while :; do
		in0 iperf3 -c 192.0.2.2 -t 600 --bidir > /dev/null 2>&1
		sleep 1
	done) &
	CPID=$!
}

traffic_stop() {
	kill "$CPID" 2>/dev/null || true
	wait "$CPID" 2>/dev/null || true
	pkill -x iperf3 || true
	wait "$SPID" 2>/dev/null || true
}

# A pair of connected-mode children, one on each side, on P_Key 0xffff,
# with 2001:db8:1::1 and ::2; pinged over RC, then deleted.
child_pair() {
	local rx

	ip -n ns0 link add link "$IB0" name chn0 type ipoib pkey 0xffff \
		mode connected || fail "ip link add chn0"
	ip -n ns1 link add link "$IB1" name chn1 type ipoib pkey 0xffff \
		mode connected || fail "ip link add chn1"
	ip -n ns0 addr add 2001:db8:1::1/64 dev chn0 nodad
	ip -n ns1 addr add 2001:db8:1::2/64 dev chn1 nodad
	ip -n ns0 link set chn0 up
	ip -n ns1 link set chn1 up
	wait_for 60 "carrier on chn0" carrier_up ns0 chn0
	wait_for 60 "carrier on chn1" carrier_up ns1 chn1
	rx=$(ns_sysfs ns1 "cat chn1/statistics/rx_bytes")
	in0 ping -6 -c 3 -i 0.2 -s 20000 -W 10 2001:db8:1::2 > /dev/null ||
		fail "no ping between the children"
	# 20000-octet pings fit only connected mode's MTU: they went over RC.
	[ "$(ns_sysfs ns1 "cat chn1/statistics/rx_bytes")" -gt $((rx + 60000)) ] ||
		fail "the children's pings did not arrive"
	ip -n ns0 link del chn0
	ip -n ns1 link del chn1
}

churn() {
	local end=$((SECONDS + CHURN_SECS)) n=0

	while [ $SECONDS -lt $end ]; do
		case $((n % 4)) in
		0)
			set_mode ns0 "$IB0" datagram
			set_mode ns0 "$IB0" connected
			;;
		1)
			ip -n ns1 link set "$IB1" down
			ip -n ns1 link set "$IB1" up
			wait_for 60 "carrier on $IB1" carrier_up ns1 "$IB1"
			;;
		2)
			child_pair
			;;
		3)
			set_mode ns1 "$IB1" datagram
			set_mode ns1 "$IB1" connected
			;;
		esac
		n=$((n + 1))
	done
	say "churn: $n steps in ${CHURN_SECS}s"
	[ $n -ge 4 ] || fail "churn ran fewer than one full cycle"
}

round() {
	local srq=$1 rx

	say "== cm_srq=$srq"
	load_module cm_srq="$srq"
	hosts_up
	set_mode ns0 "$IB0" connected
	set_mode ns1 "$IB1" connected
	in0 ping -c 1 -W 10 192.0.2.2 > /dev/null || fail "no ping in connected mode"
	# Precondition: the receive backend asked for is the one in use.
	if [ "$srq" = 1 ]; then
		srq_check rxe0 srq
	else
		srq_check rxe0 none
	fi
	traffic_start
	churn
	traffic_stop

	# Both sides connected again: an exact transfer each way, over RC
	# (IPv4: ifdown took host 1's static IPv6 address away).
	[ "$(get_mode ns0 "$IB0")" = connected ] || fail "$IB0 left in datagram mode"
	[ "$(get_mode ns1 "$IB1")" = connected ] || fail "$IB1 left in datagram mode"
	rx=$(cm_stat rxe1 rc_rx_bytes)
	tcp_digest_check 16 ns0 ns1 192.0.2.2 || fail "transfer 0 -> 1 after churn"
	[ "$(cm_stat rxe1 rc_rx_bytes)" -gt $((rx + 16 * 1048576)) ] ||
		fail "the transfer 0 -> 1 did not go over RC"
	rx=$(cm_stat rxe0 rc_rx_bytes)
	tcp_digest_check 16 ns1 ns0 192.0.2.1 || fail "transfer 1 -> 0 after churn"
	[ "$(cm_stat rxe0 rc_rx_bytes)" -gt $((rx + 16 * 1048576)) ] ||
		fail "the transfer 1 -> 0 did not go over RC"
	rxe_clean rxe0 rxe1
	unload_checked
	hosts_down
}

fabric_single
round 1
round 0
say "churn: ok"
