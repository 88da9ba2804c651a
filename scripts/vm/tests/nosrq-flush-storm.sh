#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 1800
# Flush storms without SRQ: every receive of every connection of one
# interface completes at once, into its one receive CQ.  Host 0 holds four
# no-SRQ connections, two it opened (to hosts 1 and 2) and two it accepted
# (from a child on each), with TCP into host 0 on each
# (cm_bidirectional=1: the peers send back over the connections host 0
# opened), all grown to their full ring of recv_queue_size=32 by floods
# of datagrams that meet host 0's NAPI held (napi_hold), with
# cm_nosrq_mem=12 (192 buffers) so that the rings hold what the memory
# lets them grow to.
#  - Host 0 leaves connected mode with its NAPI held (napi_hold): every
#    ring is flushed into the CQ before anything polls it.  The CQ is
#    sized for the whole memory (ipoib_cm_size.c); were it not, the
#    flushes would overflow it and teardown would wait for receives that
#    never complete.
#  - Back in connected mode with the rings full again, rxe0 is deleted
#    under that traffic, and added again: its new interface carries an
#    exact transfer from a peer over a new connection.
# Both end with the runner's kernel-log check.
. "$(dirname "$0")/../lib.sh"

RING=32

# full_rings DIRECTION: host 0's connections of that direction whose ring
# is full (a buffer or two may be on its way back under traffic).
full_rings() {
	cm_conns rxe0 | awk -v d="$1" -v r=$RING '$3 == d {
		for (i = 1; i < NF; i++) if ($i == "rx_posted" && $(i + 1) >= r - 2) n++ }
		END { print n + 0 }'
}

all_full() {
	[ "$(full_rings active)" = 2 ] && [ "$(full_rings passive)" = 2 ]
}

fabric_bridge 3
# cm_idle_timeout=0: the grown rings must stay through the quiet spells
# between traffic and storm, which would otherwise close them after 30 s.
load_module default_mode=connected cm_srq=0 cm_bidirectional=1 cm_idle_timeout=0 \
	recv_queue_size=$RING cm_nosrq_mem=12
for i in 0 1 2; do host_up $i; done
for i in 0 1 2; do host_wait $i; done
grep -q 'per-QP receives' "$(cm_debugfs rxe0)/connections" || fail "not in no-SRQ mode"

# A child on each peer, on 2001:db8:2::/64 with host 0.
in0 ip addr add 2001:db8:2::1/64 dev "$IB0" nodad
for i in 1 2; do
	ip -n ns$i link add link "$(v=IB$i; echo "${!v}")" name c$i type ipoib \
		pkey 0xffff mode connected || fail "ip link add c$i"
	ip -n ns$i addr add 2001:db8:2::1$i/64 dev c$i nodad
	ip -n ns$i link set c$i up
	wait_for 60 "carrier on c$i" carrier_up ns$i c$i
done

# grow_full: every ring of host 0 to recv_queue_size.  A ring grows only
# when its receiver uses more than half of it in one busy spell, which
# TCP's window never makes happen: with host 0's NAPI held, datagrams come
# at each of its four QPs until every receive posted there is used (the
# rest wait in RNR retries), and the release finds them all at once: each
# round doubles a ring.  Idle, a ring keeps what it has (cm_idle_timeout=0);
# a packet after a quiet second gives one buffer back.
grow_full() {
	local round floods i

	for round in 1 2 3 4 5 6 7 8; do
		all_full && return 0
		napi_hold ns0 "$IB0"
		floods=()
		for i in 1 2; do
			udp_flood ns$i 192.0.2.1 80 & floods+=($!)
			udp_flood ns$i 2001:db8:2::1 80 & floods+=($!)
		done
		wait "${floods[@]}" || { napi_release; fail "a flood into host 0 failed"; }
		sleep 2
		napi_release
		sleep 2
		say "round $round of floods into host 0's held NAPI: rings $(cm_conns rxe0 | awk '{ for (i = 1; i < NF; i++) if ($i == "rx_posted") printf "%s ", $(i + 1) }')"
	done
	wait_explain 60 "host 0's four rings full" "cat $(cm_debugfs rxe0)/connections" all_full
}

# The four connections' traffic, and its iperf3 clients.
clients=()

# Every neighbour static: each first packet dials, from the side that
# sends it.  Host 0 dials hosts 1 and 2, the children dial host 0.  Then
# every ring grown full (grow_full), and TCP into host 0 over all four (in
# the background, for longer than the test needs), data moving on each.
dial_and_fill() {
	local a0 ai ac i v p posted rx0

	a0=$(link_addr ns0 "$IB0")
	for i in 1 2; do
		v=IB$i
		ai=$(link_addr ns$i "${!v}")
		ac=$(link_addr ns$i c$i)
		in0 ip neigh replace 192.0.2.$((i + 1)) lladdr "$ai" dev "$IB0" nud permanent
		in0 ip neigh replace 2001:db8:2::1$i lladdr "$ac" dev "$IB0" nud permanent
		ip -n ns$i neigh replace 192.0.2.1 lladdr "$a0" dev "${!v}" nud permanent
		ip -n ns$i neigh replace 2001:db8:2::1 lladdr "$a0" dev c$i nud permanent
	done
	for i in 1 2; do
		in0 ping -c 2 -i 0.3 -W 10 192.0.2.$((i + 1)) || fail "ping 0 -> $i"
		ip netns exec ns$i ping -6 -c 2 -i 0.3 -W 10 -I c$i 2001:db8:2::1 ||
			fail "ping c$i -> 0"
	done
	cat "$(cm_debugfs rxe0)/connections"
	[ "$(cm_conns rxe0 | grep -c ' active live ')" = 2 ] &&
		[ "$(cm_conns rxe0 | grep -c ' passive live ')" = 2 ] &&
		[ "$(cm_conns rxe0 | wc -l)" = 4 ] ||
		fail "host 0 does not hold two opened and two accepted connections"

	grow_full
	for p in 1 2 3 4; do
		in0 iperf3 -s -1 -p 520$p > /dev/null 2>&1 &
	done
	for p in 1 2 3 4; do wait_listening ns0 520$p; done
	clients=()
	for i in 1 2; do
		ip netns exec ns$i iperf3 -c 192.0.2.1 -p 520$i -t 1700 > /dev/null 2>&1 &
		clients+=($!)
		ip netns exec ns$i iperf3 -c 2001:db8:2::1 -p 520$((i + 2)) -t 1700 \
			> /dev/null 2>&1 &
		clients+=($!)
	done
	rx0=$(conn_rx)
	wait_explain 30 "data on each of host 0's connections" \
		'echo "$rx0 ->"; conn_rx; pgrep -a iperf3' all_moving "$rx0"
}

posted_all() {
	cm_conns rxe0 | awk '{ for (i = 1; i < NF; i++) if ($i == "rx_posted") s += $(i + 1) } END { print s + 0 }'
}

conn_rx() {	# "QPN RX_PACKETS" of each of host 0's connections
	cm_conns rxe0 | awk '{ print $5, $9 }' | sort
}

all_moving() {
	[ "$(join <(echo "$1") <(conn_rx) | awk '$3 > $2' | wc -l)" = 4 ]
}

stop_traffic() {
	kill "${clients[@]}" 2>/dev/null || true
	for pid in "${clients[@]}"; do wait "$pid" 2>/dev/null || true; done
	clients=()
	pkill -x iperf3 || true
}

# host 0's RC QPs in ERR, from rdma res: N
rc_in_err() {
	[ "$(rdma res show qp link rxe0 | grep ' type RC ' | grep -c ' state ERR ')" = "$1" ]
}

# 1) A mode switch with host 0's NAPI held.  The traffic stops first, so
# that the rings are full when it begins (the peers' last packets are
# taken and reposted while the NAPI still runs).  Nothing was lost to RNR
# or retries up to here.
dial_and_fill
stop_traffic
rxe_clean rxe0 rxe1 rxe2
# TCP may have given buffers back in its quiet seconds: full again.
grow_full
cat "$(cm_debugfs rxe0)/connections"
posted=$(posted_all)
[ "$posted" -ge $((4 * (RING - 2))) ] || fail "only $posted receives posted"
say "storm 1: host 0 leaves connected mode, $posted receives posted, its NAPI held"
klog_mark=$(dmesg | wc -l)
napi_hold ns0 "$IB0"
set_mode ns0 "$IB0" datagram &
spid=$!
# Teardown waits for the flushed receives (5 s at most): let the NAPI go
# once every QP is in ERR, its ring flushed into the CQ.
if ! wait_for_rc=$(wait_for 10 "host 0's 4 RC QPs in ERR" rc_in_err 4 2>&1); then
	napi_release
	rdma res show qp link rxe0
	fail "host 0's RC QPs did not all reach ERR: $wait_for_rc"
fi
napi_release
wait "$spid" || fail "echo datagram > mode failed"
dmesg | tail -n +"$((klog_mark + 1))" | grep -E "ipoib_cm|$IB0" || true
dmesg | tail -n +"$((klog_mark + 1))" |
	matches "$IB0: connected mode stopped: 4 connections closed" ||
	fail "no message of host 0 closing its 4 connections"
[ "$(get_mode ns0 "$IB0")" = datagram ] || fail "host 0 not in datagram mode"
wait_for 60 "the peers' ends closed" sh -c \
	"! cat /sys/kernel/debug/ipoib_cm/*/connections | grep -qv '^#'"

# 2) rxe0 deleted under traffic, every ring full.
set_mode ns0 "$IB0" connected
dial_and_fill
cat "$(cm_debugfs rxe0)/connections"
posted=$(posted_all)
# Grown full before the traffic; a packet after a quiet second gives one
# buffer back, which a slow host's TCP start can do a few times.
[ "$posted" -ge $((3 * RING)) ] || fail "only $posted receives posted"
say "storm 2: rdma link del rxe0 under traffic, $posted receives posted"
klog_mark=$(dmesg | wc -l)
rdma link del rxe0 &
pid=$!
start=$EPOCHREALTIME
next=10
while kill -0 "$pid" 2>/dev/null; do
	sleep 1
	[ "$(secs_since "$start")" -ge $next ] && kill -0 "$pid" 2>/dev/null || continue
	say "rdma link del still running after ${next}s"
	blocked_stacks "$pid"
	next=$((next + 10))
	[ $next -le 120 ] || fail "rdma link del rxe0 did not return in 120 s"
done
wait "$pid" || fail "rdma link del rxe0"
say "rdma link del rxe0 returned after $(secs_since "$start") s"
ipoib_ifaces | matches "^ns0/" && fail "host 0's interface survived rdma link del"
dmesg | tail -n +"$((klog_mark + 1))" | grep -E "ipoib_cm|$IB0" || true
dmesg | tail -n +"$((klog_mark + 1))" |
	matches "$IB0: connected mode stopped: 4 connections closed" ||
	fail "no message of host 0 closing its 4 connections"
# Their interface is gone: the clients to host 0 would wait for it.
stop_traffic

# The peers' ends stay until they time out or fail: the DREQs of a
# device being removed need not get out before it is gone.
cat /sys/kernel/debug/ipoib_cm/*/connections | grep -v '^#' || true

# rxe0 again: its new interface becomes host 0, and an exact transfer from
# host 1 runs over a new connection.
rdma link add rxe0 type rxe netdev rv0 || fail "rdma link add rxe0"
wait_for 60 "rxe0 active" rxe_active rxe0
wait_for 60 "an interface on rxe0" ipoib_if_of rxe0
ifname=$(ipoib_if_of rxe0)
ip link set "$ifname" netns ns0
ip -n ns0 addr add 192.0.2.1/24 dev "$ifname"
ip -n ns0 addr add 2001:db8::1/64 dev "$ifname" nodad
ip -n ns0 link set "$ifname" up
IB0=$ifname
host_wait 0
# Host 0 has a new UD QPN, so a new link address.
in1 ip neigh del 192.0.2.1 dev "$IB1" || true
in1 ip -6 neigh flush dev "$IB1"
in1 ping -c 2 -i 0.3 -W 10 192.0.2.1 || fail "ping 1 -> 0 after rxe0 came back"
tcp_digest_check 8 ns1 ns0 2001:db8::1 || fail "1 -> 0 after the storm arrived damaged or short"
cm_conns rxe0 | matches ' live ' || fail "the transfer after the storm did not go over RC"
unload_checked
say "nosrq-flush-storm: ok"
