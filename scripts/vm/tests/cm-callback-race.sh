#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A CM callback still running when teardown takes its connection's CM id
# (issue 15: "CM callbacks read conn->id, which the reaper clears").
# The cm_hold tool (scripts/tools/cm_hold, a kprobe in front of
# ipoib_cm_handler) holds one callback at its start on one CPU; the host
# then leaves connected mode on the other CPU, its reaper clears conn->id
# and waits in ib_destroy_cm_id() for the held callback, and once the
# scenario has seen it wait there, the callback is let go.  It must work
# with the id it was given:
#  - rep: host 0 dials host 1; host 0's REP callback (QP to RTR and RTS,
#    RTU) is held, and host 0 leaves connected mode;
#  - rtu: host 0 dials host 1; host 1's RTU callback (or the established
#    event, if data in RTR came first: the accepted QP to RTS) is held,
#    and host 1 leaves connected mode;
#  - rej: host 1 in datagram mode, so its CM refuses host 0's REQ with
#    Invalid Service ID; host 0's REJ callback (which has the REQ sent
#    again, to RFC 4755's Service ID) is held, and host 0 leaves
#    connected mode;
# with the SRQ and without, after a control (with the SRQ): host 0
# refused by a datagram-mode host 1 dials again on RFC 4755's Service ID
# (a second REQ, counted) and sends what it held over UD.
# Preconditions, read from outside the driver: the callback was caught
# and not yet let go when the mode switch began, the connection was in
# its handshake then (req-sent, rep-sent), and the reaper slept in
# ib_destroy_cm_id() while it was held.
# Then: the switch returned once the callback was let go; the three
# datagrams sent meanwhile are accounted for (rep, rej: held on the
# connection host 0 closed, dropped and counted as a mode switch drops
# them; rtu: received by host 1's QP in RTR, all three, in order); no REQ
# went out on the id being destroyed (rej: one REQ in all); UD, and then
# connected mode again over RC, carry exact transfers; no RC retry was
# exhausted; rmmod leaves nothing.  Every kernel report fails the run.
# vm-timeout: 900
. "$(dirname "$0")/../lib.sh"

H=/sys/module/cm_hold/parameters

# Host 0 has a live connection to host 1 (a ping dials it if need be).
rc_live() {
	in0 ping -c 1 -W 1 192.0.2.2 > /dev/null 2>&1 || true
	cm_conns rxe0 | matches ' active live '
}

# REQs rxe0's CM sent, each counted once (the CM counts a message, with
# its retries, when it is done with it).
reqs_sent() {
	echo $(($(cm_msgs rxe0 tx req) - $(cm_retries rxe0 req)))
}

# hold_case EVENTS NS IFACE RDMADEV DIR STATE PORT ARRIVE: hold the first
# callback for one of EVENTS, make host 0 dial, and switch NS's IFACE (on
# RDMADEV, whose connection has direction DIR and is in STATE while held)
# to datagram mode.  ARRIVE: the numbers of the datagrams that must
# arrive.
#
# While the callback is held, its CPU runs with preemption off: no RCU
# grace period ends, so nothing here may wait for one until it is let go.
# `ip netns exec` does (it unmounts /sys), and so does the exit of a
# process it started: the mode switch's writer is started in host NS's
# namespace before the hold and let go through a FIFO, the senders are
# not waited for until after.
hold_case() {
	local ev=$1 ns=$2 dev=$3 rdev=$4 dir=$5 state=$6 port=$7 want=$8
	local st sm tx t0 took rx d0 tx0 q0

	insmod "${IPOIB_CM_TOOLDIR:?}/cm_hold/cm_hold.ko" event="$ev"
	switch_writer "$ns" "$dev" datagram
	sm=$SWITCH_PID
	udp_burst_rx ns1 192.0.2.2 "$port" 3 /tmp/hold.rx
	rx=$!
	wait_udp ns1 "$port"
	d0=$(cm_stat rxe0 held_dropped)
	q0=$(reqs_sent)
	echo 1 > "$H/count"
	udp_burst_tx ns0 192.0.2.2 "$port" 3 &
	tx=$!
	wait_explain 60 "a $ev callback to be held" 'cm_dump' \
		sh -c "[ \$(cat $H/held) = 1 ]"
	st=$(conn_col "$rdev" "$dir" '*' 4)
	[ "$(cat "$H/released")" = 0 ] ||
		fail "precondition: the $ev callback was let go before the switch"
	[ "$st" = "$state" ] ||
		fail "precondition: $dir connection of $dev $st, not $state, while held"
	t0=$EPOCHREALTIME
	switch_go
	release_when_destroy_waits "$ev" "$dev"
	wait "$sm" || fail "the mode switch of $dev failed"
	took=$(( (${EPOCHREALTIME/./} - ${t0/./}) / 1000 ))
	[ "$(cat "$H/released")" = 1 ] ||
		fail "the $ev callback was not let go"
	wait "$tx" || fail "the datagrams were not sent"
	say "$ev: the mode switch took ${took} ms"
	# The REJ callback must not dial again on an id being destroyed: the
	# destroy would wait that REQ out (its retries, past the CM's 10 s
	# warning).  The first REQ only.
	if [ "$ev" = rej ]; then
		q0=$(($(reqs_sent) - q0))
		[ "$q0" = 1 ] ||
			fail "$q0 REQs sent, not 1: one went out on the id being destroyed"
	fi
	rmmod cm_hold
	if [ -n "$want" ]; then
		wait "$rx" || true
	else
		# None will come: the receiver is not waited for.
		kill "$rx" 2>/dev/null || true
		wait "$rx" 2>/dev/null || true
		[ "$(cm_stat rxe0 held_dropped)" = $((d0 + 3)) ] ||
			fail "held_dropped $d0 -> $(cm_stat rxe0 held_dropped), not +3"
	fi
	[ "$(tr '\n' ' ' < /tmp/hold.rx)" = "$want" ] ||
		fail "the datagrams sent during the handshake arrived as '$(tr '\n' ' ' < /tmp/hold.rx)', not '$want'"
	! cm_conns "$rdev" | matches . ||
		fail "$dev kept a connection after leaving connected mode: $(cm_conns "$rdev")"

	# An end in datagram mode: UD, checked content.
	tcp_digest_check 1 || fail "UD transfer after the $ev race"
	# Both connected again: over RC, checked content.  Host 0 leaves and
	# enters connected mode again: a connection refused meanwhile (rtu,
	# rej) goes, with its backoff.
	set_mode ns1 "$IB1" connected
	set_mode ns0 "$IB0" datagram
	set_mode ns0 "$IB0" connected
	wait_explain 60 "a live connection from $IB0 after the $ev race" \
		cm_dump rc_live
	rxe_baseline rxe0 rxe1
	tx0=$(cm_stat rxe0 rc_tx_bytes)
	tcp_digest_check 4 || fail "RC transfer after the $ev race"
	[ $(($(cm_stat rxe0 rc_tx_bytes) - tx0)) -ge $((4 << 20)) ] ||
		fail "the transfer after the $ev race did not go over RC ($tx0 -> $(cm_stat rxe0 rc_tx_bytes))"
	rxe_clean rxe0 rxe1
}

reqs_at_least() {
	[ "$(cm_msgs rxe0 tx req)" -ge "$1" ]
}

failed_above() {
	[ "$(cm_stat rxe0 conn_failed)" -gt "$1" ]
}

# Unheld first: host 1 in datagram mode refuses host 0's REQ with Invalid
# Service ID, host 0 dials again on RFC 4755's Service ID (a second REQ),
# is refused again, and what it held goes over UD.
req_again() {
	local r0 q0 f0 rx

	set_mode ns1 "$IB1" datagram
	r0=$(cm_stat rxe0 ietf_sid_retries)
	q0=$(cm_msgs rxe0 tx req)
	f0=$(cm_stat rxe0 conn_failed)
	udp_burst_rx ns1 192.0.2.2 7300 3 /tmp/again.rx
	rx=$!
	wait_udp ns1 7300
	udp_burst_tx ns0 192.0.2.2 7300 3
	wait_explain 30 "host 0's dial to be refused" cm_dump \
		failed_above "$f0"
	wait "$rx" || true
	[ "$(tr '\n' ' ' < /tmp/again.rx)" = "0 1 2 " ] ||
		fail "held datagrams arrived as '$(tr '\n' ' ' < /tmp/again.rx)' after the refused dial"
	[ "$(cm_stat rxe0 ietf_sid_retries)" = $((r0 + 1)) ] ||
		fail "no second REQ on RFC 4755's Service ID"
	# The CM counts a REQ once it is done with it (here: cancelled by
	# the REJ), a moment after the REJ came.
	wait_explain 10 "a second REQ counted" cm_dump reqs_at_least $((q0 + 2))
	say "refused by a datagram-mode peer: ietf_sid_retries $r0 -> $(cm_stat rxe0 ietf_sid_retries), REQs sent $q0 -> $(cm_msgs rxe0 tx req)"
	set_mode ns1 "$IB1" connected
	# Host 0's failed connection and its backoff go with a mode switch.
	set_mode ns0 "$IB0" datagram
	set_mode ns0 "$IB0" connected
}

# Host 0 knows host 1's link address as it is now (a mode switch changes
# an interface's address and flushes its neighbours, static ones too) and
# its path, so that its next datagram to host 1 dials at once.
know_peer() {
	static_neighbours
	path_ready ns0 "$IB0" 192.0.2.2 ns1
}

round() {
	local srq=$1

	say "== cm_srq=$srq"
	load_module cm_srq="$srq"
	hosts_up
	set_mode ns0 "$IB0" connected
	set_mode ns1 "$IB1" connected
	# The control runs no receive backend code: with the SRQ only.
	if [ "$srq" = 1 ]; then
		know_peer
		req_again
	fi
	know_peer
	hold_case rep ns0 "$IB0" rxe0 active req-sent 7301 ''
	# No connection left on either side: the next dial is a fresh one.
	set_mode ns0 "$IB0" datagram
	set_mode ns1 "$IB1" datagram
	set_mode ns0 "$IB0" connected
	set_mode ns1 "$IB1" connected
	know_peer
	# Data in RTR may establish the connection before the RTU does
	# (COMM_EST); then the RTU is a duplicate: either callback is held.
	hold_case rtu,est ns1 "$IB1" rxe1 passive rep-sent 7302 '0 1 2 '
	set_mode ns0 "$IB0" datagram
	set_mode ns0 "$IB0" connected
	# Host 0 keeps host 1's connected-mode address: it dials, and host 1,
	# now in datagram mode, refuses.
	know_peer
	set_mode ns1 "$IB1" datagram
	hold_case rej ns0 "$IB0" rxe0 active req-sent 7303 ''
	unload_checked
	hosts_down
}

fabric_single
round 1
round 0
say "cm-callback-race: ok"
