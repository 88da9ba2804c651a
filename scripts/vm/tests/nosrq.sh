#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 1200
# Connected mode without SRQ (cm_srq=0), three hosts on a bridge:
#  - an accepted QP begins with 16 receives, grows when its receiver falls
#    behind (its NAPI held under a burst); the budget in use counts every
#    QP's buffers and its ring's bookkeeping;
#  - ping, ping6 and ping -s 65000, iperf3 30 s between two no-SRQ ends;
#  - cm_max_nosrq=1: the second peer to dial host 0 is refused with
#    NO_QP, its traffic falls back to UD (counted) and still flows, and the
#    connections already there keep working;
#  - receive-buffer bytes of an opened, idle QP (one buffer) and of an
#    accepted one, reported; a trickle after a quiet spell gives the
#    accepted QP's buffers back; 30 s with nothing received close it;
#  - cm_bidirectional=1: the peer sends back over the connection host 0
#    opened; that QP's ring grows from one receive, nothing is lost; it
#    is kept while host 0 only sends on it;
#  - cm_nosrq_per_peer=1 and cm_nosrq_mem=3: a second connection from one
#    GID and a connection the memory cannot take are refused (NO_QP,
#    counted, UD still works), and a transfer into a QP whose growth the
#    memory stops arrives whole.
. "$(dirname "$0")/../lib.sh"

conn_field() {	# conn_field RDMADEV DIR FIELD: a field of the first DIR conn
	cm_conns "$1" | awk -v d="$2" -v f="$3" \
		'$3 == d { for (i = 1; i < NF; i++) if ($i == f) { print $(i + 1); exit } }'
}

# held_burst TO FROM PORT: host TO's NAPI held (from outside the driver)
# while host FROM sends it 64 numbered datagrams over RC, so that its QP
# is used up at once (precondition: host TO sent RNR NAKs, the rest
# waiting in FROM's RNR retries); then released.  Every datagram must
# arrive, in order.  Nothing reaches the receiver while the NAPI is held:
# its wait for the first datagram spans the hold.  Held, the QP seems
# idle to its host: one that grew earlier and then carried nothing for
# 30 s would be closed under the hold, its receives never drained (seen:
# "receives not drained", a QP leaked).  A ping over it just before the
# hold gives it those 30 s, and the burst must land in that same QP.
held_burst() {
	local to=$1 from=$2 port=$3 rnr0 pid end qpn
	local dev=rxe$1 ifc=IB$1 out=/tmp/burst-$3.txt

	passive_qpn() { cm_conns "$dev" | awk '$3 == "passive" { print $5; exit }'; }
	qpn=$(passive_qpn)
	[ -n "$qpn" ] || fail "precondition: host $to has no accepted QP"
	ip netns exec "ns$from" ping -c 1 -W 10 "192.0.2.$((to + 1))" > /dev/null ||
		fail "ping $from -> $to before the burst"
	rnr0=$(rxe_stat "$dev" send_rnr_err)
	napi_hold ns$to "${!ifc}"
	UDP_BURST_TIMEOUT=300 udp_burst_rx ns$to 192.0.2.$((to + 1)) "$port" 64 "$out"
	pid=$!
	wait_udp ns$to "$port"
	udp_burst_tx ns$from 192.0.2.$((to + 1)) "$port" 64 ||
		{ napi_release; fail "burst $from -> $to"; }
	end=$((SECONDS + 20))
	until [ "$(rxe_stat "$dev" send_rnr_err)" -gt "$rnr0" ]; do
		[ $SECONDS -lt $end ] || {
			napi_release
			rdma statistic show link "$dev/1"
			cat "$(cm_debugfs "$dev")/connections"
			fail "host $to sent no RNR NAK in 20 s with its NAPI held"
		}
		sleep 0.2
	done
	napi_release
	wait "$pid" || true
	say "burst of 64 into host $to's held QP: $(wc -l < "$out") arrived;" \
		"RNR NAKs sent $rnr0 -> $(rxe_stat "$dev" send_rnr_err)"
	[ "$(passive_qpn)" = "$qpn" ] ||
		fail "host $to's accepted QP $qpn was replaced during the burst (now $(passive_qpn))"
	[ "$(seq 0 63 | tr '\n' ' ')" = "$(tr '\n' ' ' < "$out")" ] ||
		fail "the burst into host $to arrived incomplete or out of order: $(tr '\n' ' ' < "$out")"
}

fabric_bridge 3
load_module default_mode=connected cm_srq=0 cm_max_nosrq=1
for i in 0 1 2; do host_up $i; done
for i in 0 1 2; do host_wait $i; done
[ "$(link_mtu ns0 "$IB0")" = 65520 ] || fail "default_mode=connected: MTU $(link_mtu ns0 "$IB0")"
grep -q 'per-QP receives' "$(cm_debugfs rxe0)/connections" || fail "not in no-SRQ mode"

# Host 0 dials host 1, and host 1 dials back: one accepted QP each.
in0 ping -c 1 -W 10 192.0.2.2 || fail "first ping 0 -> 1"
# An accepted QP answers with 16 receives posted (1 MiB) and grows only
# once the peer has used more than half of them: one packet is replaced,
# nothing added.
first=$(conn_field rxe1 passive rx_posted)
say "host 1's accepted QP after one packet: $first receives, nosrq_rx_grown $(cm_stat rxe1 nosrq_rx_grown)"
[ "$first" = 16 ] || fail "an accepted QP has ${first:-no} receives after one packet"
[ "$(cm_stat rxe1 nosrq_rx_grown)" = 0 ] || fail "one packet grew an accepted QP"
# The budget in use is every QP's buffers (64 KiB each) and its ring's
# bookkeeping: 256 slots of 274 bytes, two buffers' worth.
# One read of the file: header and connections from the same moment.
budget_used() {	# budget_used RDMADEV: "COUNTED HELD"
	awk '/^# leaked_qps/ { got = $NF; next } /^#/ { next }
	     { for (i = 1; i < NF; i++) if ($i == "rx_buf_bytes") s += $(i + 1) / 65536 + 2 }
	     END { print got, s + 0 }' "$(cm_debugfs "$1")/connections"
}
budget_exact() {
	local u

	u=$(budget_used "$1")
	[ "${u% *}" = "${u#* }" ] && [ "${u#* }" -gt 4 ]
}
for d in rxe0 rxe1; do
	# The NAPI may still be reposting after the ping returned.
	wait_for 10 "$d's budget to count its QPs' buffers and rings ($(budget_used "$d"))" \
		budget_exact "$d"
	say "$d: nosrq_rx_bufs and the QPs' buffers and rings: $(budget_used "$d")"
done
in0 ping -c 3 -i 0.3 -M do -s 65000 192.0.2.2 || fail "ping -s 65000"
in0 ping -6 -c 3 -i 0.3 -s 65000 2001:db8::2 || fail "ping6 -s 65000"
cm_conns rxe0 | matches ' active live ' || fail "0 -> 1 not over RC"
cm_conns rxe0 | matches ' passive live ' || fail "1 -> 0 not over RC"

# Host 2 is the second peer to dial host 0: over the cap.
in2 ping -c 3 -i 0.3 -W 10 192.0.2.1 || fail "ping 2 -> 0 over UD"
cat "$(cm_debugfs rxe0)/stats" | grep -E 'req_|conn_' || true
[ "$(cm_stat rxe0 req_over_nosrq_cap)" -ge 1 ] || fail "host 0 did not refuse host 2"
[ "$(cm_stat rxe2 conn_failed)" -ge 1 ] || fail "host 2 did not count its failure"
[ "$(cm_stat rxe2 fallback_tx_packets)" -ge 1 ] || fail "host 2 sent nothing over UD"
[ "$(cm_conns rxe0 | grep -c ' passive live ')" = 1 ] || fail "host 0 accepted over its cap"
# The first large packet meets the UD MTU and learns it from the local
# ICMP error; the next ones are fragmented to fit.
in2 ping -c 1 -s 20000 -W 5 192.0.2.1 || true
in2 ping -c 2 -s 20000 -W 10 192.0.2.1 || fail "large ping 2 -> 0 (UD, fragmented)"
in0 ping -c 2 -i 0.3 -W 10 192.0.2.2 || fail "0 -> 1 broke when host 2 was refused"

iperf_check 10 || fail "iperf3 byte counts differ (no-SRQ both ends)"
tcp_digest_check 8 ns0 ns1 2001:db8::2 || fail "0 -> 1 (no-SRQ) arrived damaged or short"
cat "$(cm_debugfs rxe0)/connections" "$(cm_debugfs rxe1)/connections"
[ "$(cm_stat rxe0 rc_tx_errors)" = 0 ] || fail "RC send errors"
rxe_clean rxe0 rxe1 rxe2
srq_check rxe0 none || fail "cm_srq=0, yet an RC QP of host 0 is on an SRQ"
srq_check rxe1 none || fail "cm_srq=0, yet an RC QP of host 1 is on an SRQ"

idle=$(conn_field rxe0 active rx_buf_bytes)
full=$(conn_field rxe1 passive rx_buf_bytes)
say "receive-buffer bytes: opened, idle QP $idle; accepted QP $full"
[ "$(conn_field rxe0 active rx_posted)" = 1 ] || fail "the opened QP has more than one receive"
[ "$idle" -gt 0 ] && [ "$full" -gt "$idle" ] || fail "unexpected receive-buffer sizes"

# A receiver that keeps up needs no more than it began with: growth
# needs one that falls behind.  A burst into host 1's held NAPI: 16 fill
# its accepted QP, and released, the NAPI finds 16 completions of one QP
# at once, more than half its ring: it grows.
say "host 1's accepted QP after the streams: $(conn_field rxe1 passive rx_posted) receives"
held_burst 1 0 7100
rxe_clean rxe0 rxe1

# A trickle after a quiet spell gives buffers back, one per packet (each
# echo request comes 1.5 s after the last), while the QP keeps the 16 it
# began with.
grown=$(conn_field rxe1 passive rx_posted)
[ "$grown" -gt 24 ] || fail "host 1's accepted QP did not grow: $grown receives"
shrunk=$(cm_stat rxe1 nosrq_rx_shrunk)
sleep 2
in0 ping -c 4 -i 1.5 -W 5 192.0.2.2 > /dev/null || fail "slow ping 0 -> 1"
after=$(conn_field rxe1 passive rx_posted)
say "host 1's accepted QP: $grown receives after the traffic, $after after four packets 1.5 s apart; nosrq_rx_shrunk $shrunk -> $(cm_stat rxe1 nosrq_rx_shrunk)"
[ "$(cm_stat rxe1 nosrq_rx_shrunk)" -ge $((shrunk + 4)) ] &&
	[ "$after" -le $((grown - 4)) ] || fail "a quiet connection kept its receive memory"

# Still grown, it now receives nothing: after 30 s host 1 closes it
# (posted receives cannot be taken back otherwise), and its budget falls
# to what the connection it opened holds.  The next packet dials anew.
[ "$after" -gt 16 ] || fail "precondition: host 1's accepted QP is no longer grown ($after)"
reclaimed() {
	[ "$(cm_stat rxe1 nosrq_rx_reclaimed)" -ge 1 ] &&
		! cm_conns rxe1 | matches ' passive '
}
wait_explain 60 "host 1 to close its quiet, grown accepted QP" \
	"cm_stat rxe1 nosrq_rx_reclaimed; cat $(cm_debugfs rxe1)/connections" reclaimed
say "host 1 closed its quiet QP of $after receives: $(budget_used rxe1) units in use"
# The opened QP is 1 buffer and 2 of bookkeeping, if host 0 has not
# closed it yet for the same reason.
budget_back() {
	local u

	u=$(budget_used rxe1)
	[ "${u% *}" = "${u#* }" ] && [ "${u% *}" -le 3 ]
}
wait_explain 10 "host 1's budget to fall to its opened QP's" \
	"budget_used rxe1; cat $(cm_debugfs rxe1)/connections" budget_back
in0 ping -c 2 -i 0.3 -W 10 192.0.2.2 || fail "ping 0 -> 1 after the quiet close"
cm_conns rxe1 | matches ' passive live ' || fail "0 -> 1 not dialled again over RC"
[ "$(conn_field rxe1 passive rx_posted)" = 16 ] ||
	fail "the new accepted QP has $(conn_field rxe1 passive rx_posted) receives"

# One connection both ways: host 1 answers over the QP host 0 opened.
unload_checked
hosts_down
load_module default_mode=connected cm_srq=0 cm_bidirectional=1
hosts_up
# Host 0's first packet dials (an ARP reply from host 1 would, otherwise).
static_neighbours
in0 ping -c 3 -i 0.3 -W 10 192.0.2.2 || fail "bidirectional ping"
cat "$(cm_debugfs rxe0)/connections" "$(cm_debugfs rxe1)/connections"
[ "$(cm_conns rxe0 | wc -l)" = 1 ] || fail "host 0 has $(cm_conns rxe0 | wc -l) connections"
[ "$(cm_conns rxe1 | wc -l)" = 1 ] || fail "host 1 has $(cm_conns rxe1 | wc -l) connections"
# The opened QP began with one receive; each echo reply came back over
# it and used the whole ring, which grows it.
before=$(conn_field rxe0 active rx_posted)
[ "$before" -gt 1 ] || fail "the opened QP did not grow from its one receive: $before"
in1 iperf3 -s -1 > /dev/null 2>&1 &
spid=$!
wait_listening ns1 5201
in0 iperf3 -c 192.0.2.2 -t 10 -R -J > /tmp/iperf-r.json || fail "iperf3 -R"
wait $spid || true
got=$(python3 -S -c 'import json; print(json.load(open("/tmp/iperf-r.json"))["end"]["sum_received"]["bytes"])')
after=$(conn_field rxe0 active rx_posted)
cat "$(cm_debugfs rxe0)/connections"
say "host 1 -> host 0 over host 0's QP: $got bytes; receives posted $before -> $after"
[ "$got" -gt 1000000 ] || fail "little data came back: $got bytes"
[ "$after" -ge 1 ] || fail "the opened QP has no receive posted"
[ "$(cm_stat rxe0 nosrq_rx_grown)" -gt 0 ] || fail "no growth counted"
[ "$(cm_stat rxe1 rc_tx_errors)" = 0 ] || fail "host 1 saw RC send errors (RNR?)"
tcp_digest_check 16 ns1 ns0 2001:db8::1 ||
	fail "1 -> 0 over host 0's QP arrived damaged or short"
tcp_digest_check 8 ns0 ns1 2001:db8::2 || fail "0 -> 1 (bidirectional) arrived damaged or short"
[ "$(cm_conns rxe0 | wc -l)" = 1 ] || fail "a second connection appeared"
# A grown ring on a connection that only sends is in use: host 0 sends a
# datagram a second for 45 s over the QP it opened and receives nothing
# on it (UDP, nothing answers); 30 s without receiving must not close it.
qpn=$(conn_col rxe0 active live 5)
rx0=$(conn_col rxe0 active live 9)
posted=$(conn_field rxe0 active rx_posted)
[ "$posted" -gt 1 ] || fail "precondition: host 0's opened QP is not grown ($posted)"
UDP_BURST_TIMEOUT=20 udp_burst_rx ns1 192.0.2.2 7300 45 /tmp/oneway.txt
pid=$!
wait_udp ns1 7300
UDP_BURST_GAP=1 udp_burst_tx ns0 192.0.2.2 7300 45 || fail "one-way datagrams"
wait "$pid" || true
say "45 s of sending only, over host 0's QP $qpn of $posted receives:" \
	"$(wc -l < /tmp/oneway.txt) arrived; received on it $rx0 -> $(conn_col rxe0 active live 9);" \
	"nosrq_rx_reclaimed $(cm_stat rxe0 nosrq_rx_reclaimed)"
# Precondition: nothing came back on it (if it is still there: a new
# connection's counters say nothing of the old one).
[ "$(conn_col rxe0 active live 5)" != "$qpn" ] ||
	[ "$(conn_col rxe0 active live 9)" = "$rx0" ] ||
	fail "precondition: host 0 received on the QP it only sent on"
[ "$(cm_stat rxe0 nosrq_rx_reclaimed)" = 0 ] &&
	[ "$(conn_col rxe0 active live 5)" = "$qpn" ] ||
	fail "host 0 closed a grown connection it was sending on"
[ "$(wc -l < /tmp/oneway.txt)" = 45 ] || fail "one-way datagrams lost"
rxe_clean rxe0 rxe1
unload_checked
hosts_down

# Limits against peers: one connection per peer GID (cm_nosrq_per_peer=1)
# and 3 MiB, 48 buffers, for all the no-SRQ QPs of an interface
# (cm_nosrq_mem=3; growth stops 12 short of it, the reserve for new QPs).
# Refused REQs are answered with NO_QP, counted, and the peer is served
# over UD; the connections there are untouched.
load_module default_mode=connected cm_srq=0 cm_nosrq_per_peer=1 cm_nosrq_mem=3
for i in 0 1 2; do host_up $i; done
for i in 0 1 2; do host_wait $i; done
# Host 1 dials host 0 (16 receives there), host 0 dials back (1).
in1 ping -c 2 -i 0.3 -W 10 192.0.2.1 || fail "ping 1 -> 0"
cm_conns rxe0 | matches ' passive live ' || fail "1 -> 0 not over RC"
# A second interface on host 1's port (a child: the same GID, another
# UD QPN) dials host 0: over the per-peer cap.
ip -n ns1 link add link "$IB1" name pp1 type ipoib pkey 0xffff \
	mode connected || fail "ip link add pp1"
ip -n ns1 addr add 2001:db8:2::2/64 dev pp1 nodad
ip -n ns1 link set pp1 up
in0 ip addr add 2001:db8:2::1/64 dev "$IB0" nodad
wait_for 60 "carrier on pp1" carrier_up ns1 pp1
in1 ping -6 -c 3 -i 0.3 -W 10 2001:db8:2::1 ||
	fail "no ping from host 1's second interface (over UD)"
[ "$(cm_stat rxe0 req_over_peer_cap)" -ge 1 ] ||
	fail "host 0 did not refuse a second connection from host 1's GID"
[ "$(cm_conns rxe0 | grep -c ' passive ')" = 1 ] ||
	fail "host 0 accepted over the per-peer cap"
# The connection from host 1 grows until only the reserve is left: a
# burst into host 0's held NAPI (the ring grows only when its receiver
# falls behind) asks for more growth than the memory allows.  Every byte
# arrives, the 8 MiB after it too.
held_burst 0 1 7200
tcp_digest_check 8 ns1 ns0 2001:db8::1 ||
	fail "1 -> 0 with the receive memory used up arrived damaged or short"
[ "$(cm_stat rxe0 nosrq_rx_budget_full)" -ge 1 ] ||
	fail "host 0's receive memory was never used up"
# Host 2 dials host 0, whose receive memory cannot take 16 more buffers.
in2 ping -c 3 -i 0.3 -W 10 192.0.2.1 || fail "no ping 2 -> 0 (over UD)"
[ "$(cm_stat rxe0 req_over_nosrq_mem)" -ge 1 ] ||
	fail "host 0 did not refuse host 2 for receive memory"
total=$(cm_conns rxe0 | awk '{ for (i = 1; i < NF; i++) if ($i == "rx_buf_bytes") s += $(i + 1) } END { print s + 0 }')
cat "$(cm_debugfs rxe0)/connections"
say "host 0's receive buffers: $total bytes"
[ "$total" -le $((3 << 20)) ] || fail "host 0's receive buffers take $total bytes, over cm_nosrq_mem=3"
cm_conns rxe0 | matches ' passive live ' || fail "the connection from host 1 is gone"
rxe_clean rxe0 rxe1 rxe2
unload_checked
say "nosrq: ok"
