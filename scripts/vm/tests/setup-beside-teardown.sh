#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A peer's connection is set up while another peer's teardown waits.  The
# reaper's waits (sends flushed, Last WQE Reached, the receive CQ drained,
# up to 5 s each) must not hold up anyone else's start task.  Three hosts
# on one bridge: host 1 dials host 0, then leaves connected mode while
# host 0's NAPI is held (napi_hold), so host 0's reaper waits in its drain
# with the closing connection still in its table; meanwhile host 0 sends
# to host 2.  Host 0's connection to host 2 must become live while the
# closing one is still there.  Once with the SRQ, once without; no RC
# retry exhausted in rxe's counters.
. "$(dirname "$0")/../lib.sh"

# ifname I: host I's interface.
ifname() {
	local v=IB$1

	echo "${!v}"
}

round() {
	local srq=$1 i a2 f snap end t0 took seen='' lines sm

	say "== cm_srq=$srq"
	load_module cm_srq="$srq"
	for i in 0 1 2; do
		host_up $i
	done
	for i in 0 1 2; do
		host_wait $i
		set_mode ns$i "$(ifname $i)" connected
	done
	f=$(cm_debugfs rxe0)/connections

	# Host 0 learns host 2's path now, over UD and without a connection:
	# once its NAPI is held, no ARP or path answer could reach it.
	a2=$(ip -n ns2 -j link show "$IB2" |
	     python3 -S -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
	in0 ip neigh replace 192.0.2.3 lladdr "$a2" dev "$IB0" nud permanent
	path_ready ns0 "$IB0" 192.0.2.3 ns2

	# Host 1 dials host 0, one way only (a listener, so no ICMP answer
	# makes host 0 dial back).
	udp_burst_rx ns0 192.0.2.1 7101 3 /tmp/a.rx
	wait_udp ns0 7101
	udp_burst_tx ns1 192.0.2.1 7101 3
	wait_for 30 "a connection from $IB1 to $IB0" \
		grep -q ' passive live ' "$f"
	# Precondition: the only connection host 0 opens is the one to host 2.
	! matches ' active ' "$f" || fail "$IB0 has an active connection already"
	srq_check rxe0 "$([ "$srq" = 1 ] && echo srq || echo none)"
	udp_burst_rx ns2 192.0.2.3 7102 1 /tmp/b.rx
	wait_udp ns2 7102

	napi_hold ns0 "$IB0"
	# Host 0's datagram to host 2 leaves as soon as the connection from
	# host 1 is closing: its start task is queued after the reap.  From
	# this shell, so on CPU 0 with the rest.  The sender says when it
	# watches the file (an interpreter can take seconds to start under
	# TCG): only then does host 1 leave.
	rm -f /tmp/sbt.ready
	(export UDP_BURST_READY=/tmp/sbt.ready
	 udp_burst_tx ns0 192.0.2.3 7102 1 "$f" ' passive closing ') &
	wait_explain 60 "the datagram's sender watching $f" \
		'napi_release; jobs -l; cat "$f"' test -e /tmp/sbt.ready
	lines=$(dmesg | wc -l)
	set_mode ns1 "$IB1" datagram &
	sm=$!
	# Polled with builtins only: the reaper's drain gives up after 5 s.
	end=$((SECONDS + 30))
	until [[ "$(< "$f")" == *" passive closing "* ]]; do
		if [ $SECONDS -ge $end ]; then
			napi_release
			fail "the connection from $IB1 never began closing"
		fi
	done
	t0=$EPOCHREALTIME
	while :; do
		snap=$(< "$f")
		if [[ "$snap" == *" active live "* ]]; then
			[[ "$snap" == *" passive "* ]] && seen=1
			break
		fi
		took=$(( (${EPOCHREALTIME/./} - ${t0/./}) / 1000 ))
		[ "$took" -lt 3500 ] || break
	done
	napi_resume
	took=$(( (${EPOCHREALTIME/./} - ${t0/./}) / 1000 ))
	wait "$sm" || fail "mode switch of $IB1 failed"
	napi_release
	wait_for 30 "the datagram to $IB2" grep -q '^0$' /tmp/b.rx
	say "after the close began: ${took} ms; host 0's connections then:"
	echo "$snap"
	[ -n "$seen" ] ||
		fail "$IB0's connection to $IB2 was not live while the one from $IB1 was still closing"
	wait_for 30 "the connection from $IB1 gone" sh -c "! grep -q ' passive ' $f"
	say "$(dmesg | tail -n +$((lines + 1)) | grep -c 'timed out\|not drained\|not flushed' || true) teardown warnings"

	# Connected-mode traffic ran between all three: no RC retry was
	# exhausted (host 1's teardown sends nothing into a dead QP: host 0
	# never sent to host 1).
	rxe_clean rxe0 rxe1 rxe2

	wait
	unload_checked
	hosts_down
}

fabric_bridge 3
round 1
round 0
say "setup-beside-teardown: ok"
