#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Connected mode torn down under iperf3 in both directions: a mode switch
# (once more with receive completions held back) and rmmod, once with the
# shared receive queue and once without (no-SRQ: every QP's own receive
# buffers are in flight when it goes); with the SRQ, ifdown/ifup and the
# removal of the RDMA device too (they reach the same stop).  Then with cm_bidirectional=1, iperf3 both ways over one
# connection: a mode switch and rmmod.  Then connections held in their
# handshake (every REP lost on the wire) beside iperf3: a mode switch
# that finds them in req-sent and rep-sent, and rmmod.  Closing the
# connections takes at most 10 s each time, no RC retry is exhausted
# before a teardown, and nothing is left behind (kmemleak and the kernel
# log are checked by the runner).
# vm-timeout: 2400
. "$(dirname "$0")/../lib.sh"

# Run a teardown command under traffic.  The kernel reports how long
# closing the connections took ("connected mode stopped: N connections
# closed in T ms"): each such report must be at most 10 s.  The command as
# a whole, process start-up on a saturated emulated CPU included, must end
# within 60 s; for rmmod, rmmod's own time (RMMOD_SECS, unload_module),
# as the checks around it start several processes, which under this load
# takes tens of seconds.
within_10s() {
	teardown_run "$@"
	teardown_judge "$1"
}

# teardown_run WHAT COMMAND...: run it, noting how long it took (TD_TOOK)
# and the kernel log's length before (TD_LINES).
teardown_run() {
	local what=$1 start
	shift
	TD_LINES=$(dmesg | wc -l)
	start=$(date +%s.%N)
	"$@" || fail "$what failed"
	TD_TOOK=$(echo "$(date +%s.%N) - $start" | bc)
	if [ -n "${RMMOD_SECS:-}" ]; then
		say "$what: rmmod ran ${RMMOD_SECS}s"
		TD_TOOK=$RMMOD_SECS
		unset RMMOD_SECS
	fi
}

# teardown_judge WHAT: the closing reports since teardown_run.
teardown_judge() {
	local what=$1

	say "$what: command took ${TD_TOOK}s"
	closing_judged "$what" "$TD_LINES"
	[ "$(echo "$TD_TOOK <= 60" | bc)" = 1 ] || fail "$what took ${TD_TOOK}s"
}

# rxe's counters are judged over each loaded stretch, up to the teardown
# that ends it: that teardown may exhaust its peer's retries, legitimately
# (a QP destroyed while its peer still sends into it, before the DREQ
# arrives).  load_begins restarts the count (rxe_baseline) once no
# connection of either host is closing; load_judged (rxe_clean) comes
# before the teardown.
load_begins() {
	wait_explain 60 "no connection closing" cm_dump none_closing
	rxe_baseline rxe0 rxe1
}

none_closing() {
	local f

	for f in "$(cm_debugfs rxe0)/connections" "$(cm_debugfs rxe1)/connections"; do
		[ ! -e "$f" ] || ! matches ' closing ' "$f" || return 1
	done
}

load_judged() {
	rxe_clean rxe0 rxe1
}

# rc_flowing SECS: data flows over RC both ways: each host's rc_rx_bytes
# grows by a megabyte within SECS.
rc_flowing() {
	local rx0 rx1
	rx0=$(cm_stat rxe0 rc_rx_bytes)
	rx1=$(cm_stat rxe1 rc_rx_bytes)
	wait_explain "$1" "RC traffic both ways" cm_dump sh -c \
		"[ \$(awk '\$1 == \"rc_rx_bytes\" {print \$2}' $(cm_debugfs rxe0)/stats) -gt $((rx0 + 1000000)) ] &&
		 [ \$(awk '\$1 == \"rc_rx_bytes\" {print \$2}' $(cm_debugfs rxe1)/stats) -gt $((rx1 + 1000000)) ]"
}

traffic_start() {
	load_begins
	in1 iperf3 -s > /dev/null 2>&1 &
	SPID=$!
	wait_listening ns1 5201
	in0 iperf3 -c 192.0.2.2 -t 300 --bidir > /dev/null 2>&1 &
	CPID=$!
	# Until data flows over RC both ways.
	rc_flowing 30
	sleep 2
	load_judged
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
	local srq=$1 p rx rv rn rx2 rv2 rn2 lines sm ms us uc end f rate=1M

	# Only this flow: a faster one would empty the receive queue.
	! pgrep -x iperf3 > /dev/null || fail "iperf3 still running"
	# UDP over RC into $IB0: unlike TCP, it goes on when nothing is
	# delivered; slow enough that the receive queue is not empty before
	# the checks below, each of which takes a second or more on an
	# emulated CPU.  The SRQ holds 256 receives, 16 s of 16 messages a
	# second; a no-SRQ accepted QP that has not been pressed holds 16,
	# which at 2 a second last 8 s (at 16 a second they were gone before
	# napi_hold had returned: no completion was left to hold).
	[ "$srq" = 1 ] || rate=128K
	load_begins
	in0 iperf3 -s -p 5202 > /dev/null 2>&1 &
	us=$!
	wait_listening ns0 5202
	rx=$(cm_stat rxe0 rc_rx_bytes)
	in1 iperf3 -u -c 192.0.2.1 -p 5202 -b "$rate" -l 8000 -t 300 \
		> /dev/null 2>&1 &
	uc=$!
	wait_for 60 "UDP over RC into $IB0" sh -c \
		"[ \$(awk '\$1 == \"rc_rx_bytes\" {print \$2}' $(cm_debugfs rxe0)/stats) -gt $((rx + 200000)) ]"
	load_judged

	# The traffic stays off the held CPU.
	for p in $(pgrep -x iperf3); do
		taskset -a -p -c 0 "$p" > /dev/null
	done
	napi_hold ns0 "$IB0"
	rx=$(cm_stat rxe0 rc_rx_bytes)
	rv=$(rxe_stat rxe0 rdma_recvs)
	rn=$(rxe_stat rxe0 send_rnr_err)
	# Up to 12 s, polled every second: with the host busy, this CPU also
	# runs rxe and the sender (10 messages took longer than 5 s once).
	# Five completions held are enough to prove the point and fit in
	# what a no-SRQ QP has left after napi_hold.  Or none, if rxe0 sends
	# RNR NAKs meanwhile: its QP's receives were all used before these
	# reads (a slow napi_hold on a loaded host: CI's cold run) and none
	# came back, which only the NAPI does; their completions wait.
	end=$((SECONDS + 12))
	rv2=$rv
	rn2=$rn
	while [ "$rv2" -lt $((rv + 5)) ] && [ "$rn2" = "$rn" ] &&
	      [ $SECONDS -lt $end ]; do
		sleep 1
		rv2=$(rxe_stat rxe0 rdma_recvs)
		rn2=$(rxe_stat rxe0 send_rnr_err)
	done
	rx2=$(cm_stat rxe0 rc_rx_bytes)
	# Precondition: rxe0 completed receives, the driver polled none.
	say "held: rc_rx_bytes $rx -> $rx2, rxe0 rdma_recvs $rv -> $rv2, RNR NAKs sent $rn -> $rn2"
	if [ "$rx2" != "$rx" ] ||
	   { [ "$rv2" -lt $((rv + 5)) ] && [ "$rn2" = "$rn" ]; }; then
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

# round SRQ: the teardowns with cm_srq=SRQ: a mode switch, one with
# receive completions held, rmmod; with the SRQ also ifdown and the
# removal of the RDMA device.
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

	held_switch "$srq"
	[ "$(cm_conns rxe0 | wc -l)" = 0 ] || fail "connections left after the held switch"
	connect_both

	# Ifdown and device removal reach the same stop as a mode switch;
	# only the receive backend's part differs, and the switches above
	# and rmmod below run it without the SRQ.  With the SRQ only.
	if [ "$srq" = 1 ]; then
		other_teardowns
	fi
	traffic_start
	within_10s "rmmod under traffic" unload_checked
	traffic_stop
	hosts_down
}

# Ifdown, then removal of rxe1, under traffic; then host 1 back on a new
# rxe1, both connected.
other_teardowns() {
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
}

# One connection carries host 0's and host 1's traffic: each host has one
# connection, live, one side's opened and the other's accepted (host 0's
# ping dials it; were both to dial at once, RFC 4755 3.3 leaves one), and
# each has sent and received a megabyte over it.  A FAILED one does not
# count: it has no QP and sends nothing (host 1 keeps one from its dials
# while host 0 was in datagram mode, refused).
one_connection() {
	local d0 d1
	d0=$(awk '!/^#/ && $4 != "failed" { n++; if ($4 == "live" && $8 > 1000000 && $10 > 1000000) d = $3 }
		  END { if (n == 1) print d }' "$(cm_debugfs rxe0)/connections")
	d1=$(awk '!/^#/ && $4 != "failed" { n++; if ($4 == "live" && $8 > 1000000 && $10 > 1000000) d = $3 }
		  END { if (n == 1) print d }' "$(cm_debugfs rxe1)/connections")
	[ -n "$d0" ] && [ -n "$d1" ] && [ "$d0" != "$d1" ] ||
		{ cm_dump; fail "the traffic both ways is not on one connection"; }
	say "one connection both ways, $d0 on host 0: $(cm_conns rxe0 | awk '$4 != "failed" { print "QP", $5, "sent", $8, "received", $10 }')"
}

# round_bidir: cm_bidirectional=1, iperf3 both ways over one connection,
# torn down by a mode switch and by rmmod.
round_bidir() {
	say "== cm_bidirectional=1"
	load_module cm_bidirectional=1
	hosts_up
	connect_both
	traffic_start
	one_connection
	within_10s "mode switch to datagram under traffic over one connection" \
		set_mode ns0 "$IB0" datagram
	traffic_stop
	[ "$(cm_conns rxe0 | wc -l)" = 0 ] || fail "connections left after the switch"
	connect_both
	traffic_start
	one_connection
	within_10s "rmmod under traffic over one connection" unload_checked
	traffic_stop
	hosts_down
}

REP=0x0013
TRACING=/sys/kernel/tracing

# out_of_handshake DEBUGFS: no connection of the interface is in req-sent
# or rep-sent.
out_of_handshake() {
	awk '$4 == "req-sent" || $4 == "rep-sent" { f = 1 } END { exit f }' "$1/connections"
}

# rc_rx NAME: host NAME's rc_rx_bytes, read with builtins only.
rc_rx() {
	local t

	t=$(< "$(cm_debugfs "$1")/stats")
	[[ "$t" =~ rc_rx_bytes\ ([0-9]+) ]] && echo "${BASH_REMATCH[1]}"
}

# round_handshake: host 0 and a third host (a child of host 1's interface)
# dial each other while iperf3 runs both ways between hosts 0 and 1 over
# connections made before, and every REP is lost on the wire, so the
# connections between them stay in their handshake; then host 0 leaves
# connected mode, and the module is unloaded, under that traffic.  The CM
# gives up on a REQ after about 25 s and on a REP after about 10 s (a
# retried REQ makes a new one): pings every half second from both sides
# dial again after each give-up (and the backoff), and the switch comes
# the moment all are seen in their handshake, polled with builtins only
# (under this load starting a process takes seconds), from a shell in
# ns0 started before that waits on a FIFO.  The trace says where the
# switch found them.
round_handshake() {
	local c dc q0 qc tr rx0 rx1 mid0 mid1 t0 pids f0 fc s0 sc end swpid start

	say "== teardown mid-handshake"
	# The faults' root qdiscs, before any traffic (wire_root).
	wire_root veth0
	wire_root veth1
	load_module
	hosts_up
	c=$IB1.h
	ip -n ns1 link add link "$IB1" name "$c" type ipoib pkey 0xffff mode connected ||
		fail "ip link add $c"
	ip netns add ns2
	ip -n ns1 link set "$c" netns ns2
	ip -n ns2 link set lo up
	ip -n ns2 addr add 192.0.2.9/24 dev "$c"
	ip -n ns2 link set "$c" up
	wait_for 60 "carrier on $c" carrier_up ns2 "$c"
	qc=0x$(link_addr ns2 "$c" | cut -d: -f2-4 | tr -d :)
	q0=0x$(link_addr ns0 "$IB0" | cut -d: -f2-4 | tr -d :)
	dc=/sys/kernel/debug/ipoib_cm/rxe1-1.ffff.${qc#0x}
	[ -d "$dc" ] || fail "no debugfs directory $dc for $c"
	f0=$(cm_debugfs rxe0)/connections
	fc=$dc/connections
	connect_both
	# Each knows the other's link address: no ARP answer waits on a
	# connection that cannot complete.
	in0 ip neigh replace 192.0.2.9 lladdr "$(link_addr ns2 "$c")" dev "$IB0" nud permanent
	ip netns exec ns2 ip neigh replace 192.0.2.1 lladdr "$(link_addr ns0 "$IB0")" \
		dev "$c" nud permanent
	traffic_start
	# From now on no REP reaches either side: the connections between
	# hosts 0 and 1 exist, the ones with $c cannot complete.
	cm_drop veth0 $REP
	cm_drop veth1 $REP
	echo > $TRACING/trace
	echo 1 > $TRACING/events/ipoib_cm/ipoib_cm_state/enable
	rm -f /tmp/switch.go
	mkfifo /tmp/switch.go
	in0 sh -c "read x < /tmp/switch.go && echo datagram > /sys/class/net/$IB0/mode" &
	swpid=$!
	TD_LINES=$(dmesg | wc -l)
	rx0=$(rc_rx rxe0)
	rx1=$(rc_rx rxe1)
	t0=$SECONDS
	in0 ping -i 0.5 -W 1 -w 120 192.0.2.9 > /dev/null 2>&1 &
	pids=$!
	ip netns exec ns2 ping -i 0.5 -W 1 -w 120 192.0.2.1 > /dev/null 2>&1 &
	pids+=" $!"
	# Until host 0's connection to $c is in req-sent and the one from $c
	# in rep-sent, and $c's two halves likewise.
	end=$((SECONDS + 90))
	while :; do
		s0=$(< "$f0")
		sc=$(< "$fc")
		[[ "$s0" == *" $qc active req-sent "* && "$s0" == *" $qc passive rep-sent "* &&
		   "$sc" == *" $q0 active req-sent "* && "$sc" == *" $q0 passive rep-sent "* ]] &&
			break
		if [ $SECONDS -ge $end ]; then
			kill $pids $swpid 2>/dev/null || true
			echo "$s0"
			echo "$sc"
			grep ipoib_cm_state $TRACING/trace || true
			fail "the connections between $IB0 and $c were never all in their handshake"
		fi
		# Leave the CPUs to the traffic: a loop without a pause
		# forks a subshell per read, back to back.
		sleep 0.1
	done
	# All four can be there within a second of the dial, too soon for
	# TCP under emulation to have moved bytes both ways (seen: host 1
	# none in 0.5 s): wait for them, 5 s at most, well inside the
	# REP's 10 s (the trace below checks where the switch found them).
	end=$((SECONDS + 5))
	until { [ "$(rc_rx rxe0)" -gt "$rx0" ] && [ "$(rc_rx rxe1)" -gt "$rx1" ]; } ||
	      [ $SECONDS -ge $end ]; do
		sleep 0.2
	done
	mid0=$(rc_rx rxe0)
	mid1=$(rc_rx rxe1)
	start=$EPOCHREALTIME
	echo go > /tmp/switch.go
	wait $swpid || fail "mode switch to datagram mid-handshake failed"
	TD_TOOK=$(secs_since "$start")
	echo 0 > $TRACING/events/ipoib_cm/ipoib_cm_state/enable
	# Other traffic went on meanwhile, over RC both ways: counted up to
	# the switch, while the handshakes were held.
	say "rc_rx_bytes beside the held handshakes: host 0 $rx0 -> $mid0 -> $(rc_rx rxe0)," \
		"host 1 $rx1 -> $mid1 -> $(rc_rx rxe1) (dial, switch, after); iperf3: $(pgrep -cx iperf3)"
	[ "$mid0" -gt "$rx0" ] && [ "$mid1" -gt "$rx1" ] ||
		{ cm_dump; grep ipoib_cm_state $TRACING/trace || true
		  fail "no traffic beside the held handshakes"; }
	kill $pids 2>/dev/null || true
	wait $pids 2>/dev/null || true
	say "held in their handshake beside iperf3, $((SECONDS - t0)) s after the dial began; host 0's connections, and $c's, then:"
	echo "$s0"
	echo "$sc"
	# Precondition: the switch found both in their handshake (neither had
	# failed or completed), and REPs were lost on the wire both ways.
	tr=$(grep ipoib_cm_state $TRACING/trace || true)
	grep -q "ipoib_cm_state: $IB0 peer [0-9a-f:]* qpn $qc active rc_qpn 0x[0-9a-f]*: req-sent -> closing on shutdown" <<< "$tr" &&
	grep -q "ipoib_cm_state: $IB0 peer [0-9a-f:]* qpn $qc passive rc_qpn 0x[0-9a-f]*: rep-sent -> closing on shutdown" <<< "$tr" ||
		{ echo "$tr"; fail "the switch did not find both connections with $c in their handshake"; }
	[ "$(cm_dropped veth0)" -ge 1 ] && [ "$(cm_dropped veth1)" -ge 1 ] ||
		fail "no REP dropped on the wire (veth0 $(cm_dropped veth0), veth1 $(cm_dropped veth1))"
	say "the switch took them from req-sent and rep-sent; REPs dropped on veth0 $(cm_dropped veth0), veth1 $(cm_dropped veth1)"
	teardown_judge "mode switch to datagram mid-handshake under traffic"
	[ "$(cm_conns rxe0 | wc -l)" = 0 ] || fail "connections left after the switch"
	# $c's halves end their handshake too (REJ, or their own timeout).
	wait_explain 60 "$c's connections out of their handshake" \
		'cat "$dc/connections"' out_of_handshake "$dc"
	within_10s "rmmod after the mid-handshake switch, under traffic" unload_checked
	traffic_stop
	wire_clear veth0
	wire_clear veth1
	hosts_down
}

fabric_single
# TEARDOWN_PARTS picks parts by name, for debugging.
for part in ${TEARDOWN_PARTS:-srq nosrq bidir handshake}; do
	case $part in
	srq)	round 1 ;;
	nosrq)	round 0 ;;
	bidir)	round_bidir ;;
	handshake) round_handshake ;;
	*)	fail "no part $part" ;;
	esac
done
say "connected-teardown: ok"
