#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 1500
# The RTR -> RTS window, with the RTU lost on the wire (a tc filter on the
# dialling side's veth drops every CM RTU it sends, so the accepting side
# learns of the connection only from the data):
#  - one connection both ways (cm_bidirectional=1), with SRQ and without:
#    a numbered burst the accepting side sends while its QP is in RTR is
#    held (its sends wait; nothing is refused) and arrives complete and in
#    order once the first data moves the QP to RTS; then exact transfers
#    both ways on the same connection, which is never dialled again, while
#    the CM stops resending its REP;
#  - the default mode: a TCP transfer that opens the connection itself;
#  - both sides dialling at once, the REQs forced to cross on the wire:
#    one connection is left, and carries exact transfers both ways.
. "$(dirname "$0")/../lib.sh"

BURST=200
CROSS_BURST=200
# The size of each exact transfer, MiB.
MIB=8
RTU=0x0014

accepted_in_rtr() {
	[ -n "$(conn_col rxe1 passive rep-sent 5)" ]
}

# rep_retries: how often host 1's CM resent a REP.
rep_retries() {
	cm_retries rxe1 rep
}

# The connection host 0 opened stayed the one it opened: same QP, no
# second dial, no retransmission exhausted.
same_connection() {
	local qpn=$1 what=$2

	[ "$(conn_col rxe0 active live 5)" = "$qpn" ] ||
		{ cm_dump; fail "$what: host 0's connection was replaced"; }
	[ "$(cm_stat rxe0 conn_active_up)" = 1 ] ||
		{ cm_dump; fail "$what: host 0 dialled $(cm_stat rxe0 conn_active_up) times"; }
	rxe_clean rxe0 rxe1
}

# rtu_lost SRQ: the burst and the transfers over a connection whose RTU
# never arrives, with cm_srq=SRQ.
rtu_lost() {
	local srq=$1 rtu0 held qpn t0 retries got

	say "== RTU lost, one connection both ways, cm_srq=$srq"
	load_module default_mode=connected cm_bidirectional=1 cm_srq="$srq"
	hosts_up
	static_neighbours
	# Host 1 sends its burst the moment it accepts: its path to host 0
	# must be resolved by then, or all but the first few packets are
	# dropped in front of the lookup, before the connection sees them.
	path_ready ns1 "$IB1" 192.0.2.1 ns0
	cm_drop veth0 $RTU
	# Host 0's data waits 3 s on the wire too, so host 1's QP stays in
	# RTR while it sends the burst (the CM gives up on its REP after
	# about 7 s).
	wire_delay veth0 3000
	rtu0=$(cm_msgs rxe1 rx rtu)

	udp_burst_rx ns0 192.0.2.1 7100 $BURST /tmp/burst.rx
	local brx=$!
	wait_udp ns0 7100
	# The sender is ready before the connection exists: it sends the
	# moment host 1's accepted connection shows in RTR.
	rm -f /tmp/burst.ready
	(export UDP_BURST_READY=/tmp/burst.ready
	 udp_burst_tx ns1 192.0.2.1 7100 $BURST "$(cm_debugfs rxe1)/connections" \
		' passive rep-sent ') &
	local btx=$!
	wait_for 60 "the burst's sender watching" test -e /tmp/burst.ready
	in0 ping -c 1 -W 30 192.0.2.2 > /tmp/ping.out &
	local ppid=$!
	wait $btx || { cm_dump; fail "the burst was not sent"; }
	# Precondition: the burst met a QP in RTR and was held there.  On a
	# loaded host the data may arrive before all of it is sent; the rest
	# then races the flush, and must still keep its place.
	held=$(cm_stat rxe1 held_before_rts)
	[ "$held" -ge 1 ] ||
		{ cm_dump; fail "host 1's QP left RTR before the burst was held"; }
	wait $ppid || { cm_dump; fail "the ping that dialled got no answer"; }
	wait $brx || true
	got=$(wc -l < /tmp/burst.rx)
	[ "$(cm_stat rxe1 drop_path_queue_full)" = 0 ] ||
		{ cm_dump; fail "host 1 dropped $(cm_stat rxe1 drop_path_queue_full) packets queued behind its path lookup"; }
	seq 0 $((BURST - 1)) | cmp -s - /tmp/burst.rx ||
		{ cm_dump; seq 0 $((BURST - 1)) | diff - /tmp/burst.rx | sed -n 1,10p || true
		  fail "the held burst arrived incomplete or out of order ($got of $BURST)"; }
	say "held burst: $held of $BURST datagrams held in RTR, all arrived in order"
	[ "$(cm_stat rxe1 held_dropped)" = 0 ] || fail "held packets dropped"
	[ "$(cm_stat rxe1 held_flushed)" -ge "$held" ] || fail "held packets not flushed"
	[ "$(cm_stat rxe1 comm_est)" -ge 1 ] || fail "COMM_EST path not taken"
	# The fault really happened: host 0 sent an RTU, host 1 never got one.
	[ "$(cm_dropped veth0)" -ge 1 ] || fail "no RTU was dropped on the wire"
	[ "$(cm_msgs rxe1 rx rtu)" = "$rtu0" ] || fail "an RTU reached host 1"
	say "RTUs dropped on veth0: $(cm_dropped veth0); received by rxe1: 0"

	wire_undelay veth0
	qpn=$(conn_col rxe0 active live 5)
	[ -n "$qpn" ] || { cm_dump; fail "host 0 has no live connection"; }
	retries=$(rep_retries)
	t0=$SECONDS
	tcp_digest_check "$MIB" ns0 ns1 2001:db8::2 ||
		fail "cm_srq=$srq: 0 -> 1 arrived damaged or short"
	tcp_digest_check "$MIB" ns1 ns0 2001:db8::1 ||
		fail "cm_srq=$srq: 1 -> 0 arrived damaged or short"
	[ "$(cm_stat rxe0 rc_rx_bytes)" -gt $((MIB << 20)) ] &&
		[ "$(cm_stat rxe1 rc_rx_bytes)" -gt $((MIB << 20)) ] ||
		fail "the transfers did not both go over RC"
	# Established by the data: the CM resends no REP any more (it would
	# every second or so, each answered by an RTU the filter drops).
	while [ $((SECONDS - t0)) -lt 6 ]; do
		sleep 1
	done
	[ "$(rep_retries)" = "$retries" ] ||
		fail "the CM still resends its REP: COMM_EST did not take effect"
	same_connection "$qpn" "cm_srq=$srq"
	[ "$(cm_conns rxe1 | wc -l)" = 1 ] || fail "host 1 has more than one connection"
	say "cm_srq=$srq: RTUs dropped $(cm_dropped veth0), REP retries $(rep_retries)"
	wire_clear veth0
	unload_checked
	hosts_down
}

default_mode() {
say "== RTU lost, the default mode: TCP opens the connection"
load_module default_mode=connected
hosts_up
static_neighbours
cm_drop veth0 $RTU
tcp_digest_check "$MIB" ns0 ns1 2001:db8::2 || fail "default mode: damaged or short"
[ "$(cm_dropped veth0)" -ge 1 ] || fail "default mode: no RTU was dropped"
[ "$(cm_stat rxe1 comm_est)" -ge 1 ] || fail "default mode: COMM_EST path not taken"
qpn=$(conn_col rxe0 active live 5)
[ "$(cm_conns rxe0 | wc -l)" = 2 ] || fail "default mode: not one connection per direction"
tcp_digest_check "$MIB" ns0 ns1 2001:db8::2 || fail "default mode: second transfer"
same_connection "$qpn" "default mode"
wire_clear veth0
unload_checked
hosts_down
}

# The link address without its flags, as RFC 4755 3.3 compares them.
flagless() {
	ip -n "$1" -j link show "$2" |
		python3 -S -c 'import json,sys; print("00" + json.load(sys.stdin)[0]["address"][2:])'
}

crossing() {
say "== both sides dial at once; the REQs cross on the wire"
load_module default_mode=connected cm_bidirectional=1
hosts_up
static_neighbours
# The smaller address (y) accepts the peer's REQ and gives up its own: the
# packets it held on the REQ it gave up must leave before the ones it sent
# after, on the connection it accepted.  y streams numbered datagrams
# every 20 ms from before its REQ leaves until after it gives way; x dials
# at the same moment.
if [[ "$(flagless ns0 "$IB0")" < "$(flagless ns1 "$IB1")" ]]; then
	y=0 x=1
else
	y=1 x=0
fi
local ifx ify
ify=$([ $y = 0 ] && echo "$IB0" || echo "$IB1")
ifx=$([ $x = 0 ] && echo "$IB0" || echo "$IB1")
path_ready ns$y "$ify" 192.0.2.$((x + 1)) ns$x
path_ready ns$x "$ifx" 192.0.2.$((y + 1)) ns$y
udp_burst_rx ns$x 192.0.2.$((x + 1)) 7101 $CROSS_BURST /tmp/cross.rx
local brx=$!
wait_udp ns$x 7101
# Every packet waits 1 s each way: both REQs are out before either lands.
wire_delay veth0 1000
wire_delay veth1 1000
# Both senders start first and fire together when /tmp/go says so (a
# process start takes longer than that second under TCG): y's stream,
# and one datagram from x that dials x's REQ.  Each says when it is
# watching; "go" waits for both (a fixed wait once let x start over a
# second late, after y's REQ had landed: nothing crossed).
: > /tmp/go
rm -f /tmp/ready.x /tmp/ready.y
(export UDP_BURST_GAP=0.02 UDP_BURST_READY=/tmp/ready.y
 udp_burst_tx ns$y 192.0.2.$((x + 1)) 7101 $CROSS_BURST /tmp/go '^go') &
local btx=$!
(export UDP_BURST_READY=/tmp/ready.x
 udp_burst_tx ns$x 192.0.2.$((y + 1)) 7102 1 /tmp/go '^go') &
local px=$!
# The CM's counters outlive the module: count from here.
local req0 req1
req0=$(cm_msgs rxe0 tx req)
req1=$(cm_msgs rxe1 tx req)
wait_for 60 "both senders watching /tmp/go" test -e /tmp/ready.x -a -e /tmp/ready.y
echo go > /tmp/go
wait $btx || fail "host $y's stream was not sent"
wait $px || fail "host $x's datagram was not sent"
wait $brx || true
wire_undelay veth0
wire_undelay veth1
crossed=$(($(cm_stat rxe0 req_crossed) + $(cm_stat rxe1 req_crossed)))
say "crossed REQs: rxe0 $(cm_stat rxe0 req_crossed), rxe1 $(cm_stat rxe1 req_crossed); host $y gave way"
[ "$(cm_msgs rxe0 tx req)" -gt "$req0" ] && [ "$(cm_msgs rxe1 tx req)" -gt "$req1" ] ||
	{ cm_dump; fail "the two sides did not both dial"; }
[ "$crossed" -ge 1 ] || { cm_dump; fail "the REQs did not cross"; }
[ "$(cm_stat rxe$y conn_passive_up)" -ge 1 ] && [ "$(cm_stat rxe$y conn_active_up)" = 0 ] ||
	{ cm_dump; fail "host $y did not give way to host $x's REQ"; }
seq 0 $((CROSS_BURST - 1)) | cmp -s - /tmp/cross.rx ||
	{ cm_dump; seq 0 $((CROSS_BURST - 1)) | diff - /tmp/cross.rx | sed -n 1,10p || true
	  fail "host $y's stream across the crossing arrived incomplete or out of order ($(wc -l < /tmp/cross.rx) of $CROSS_BURST)"; }
say "host $y's $CROSS_BURST datagrams across the crossing arrived in order"
wait_for 15 "a single connection" sh -c \
	"[ \$(grep -vc '^#' $(cm_debugfs rxe0)/connections) = 1 ] &&
	 [ \$(grep -vc '^#' $(cm_debugfs rxe1)/connections) = 1 ]"
tcp_digest_check "$MIB" ns0 ns1 2001:db8::2 || fail "crossed: 0 -> 1"
tcp_digest_check "$MIB" ns1 ns0 2001:db8::1 || fail "crossed: 1 -> 0"
cat "$(cm_debugfs rxe0)/connections" "$(cm_debugfs rxe1)/connections"
[ "$(cm_conns rxe0 | wc -l)" = 1 ] && [ "$(cm_conns rxe1 | wc -l)" = 1 ] ||
	fail "more than one connection after the transfers"
[ "$(cm_stat rxe0 rc_rx_bytes)" -gt $((MIB << 20)) ] &&
	[ "$(cm_stat rxe1 rc_rx_bytes)" -gt $((MIB << 20)) ] ||
	fail "not both directions over RC"
rxe_clean rxe0 rxe1
unload_checked
hosts_down
}

fabric_single
# RTR_PARTS picks parts by name (for debugging, and for core.sh).
for part in ${RTR_PARTS:-srq nosrq default_mode crossing}; do
	case $part in
	srq)	rtu_lost 1 ;;
	nosrq)	rtu_lost 0 ;;
	*)	$part ;;
	esac
done
say "rtr: ok"
