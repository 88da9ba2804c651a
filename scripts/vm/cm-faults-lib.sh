# SPDX-License-Identifier: GPL-2.0
# The body of the cm-faults-srq and cm-faults-nosrq scenarios.  Sourced.
#
# Failures inside the CM handlers and the connection tasks, injected by the
# kernel's fail_function at the driver's injection points
# (ALLOW_ERROR_INJECTION): QP creation, each QP transition, the receive
# backend's first receives, the REQ and the REP, on the side that dials
# and on the side that accepts.  Host 0 sends numbered UDP datagrams to a
# listener on host 1 (one way: host 1 never dials back), so host 0's calls
# come first and fail_function's "space" picks the N-th call of a point
# to fail, once.  For each point and N:
#  - precondition: the failure was injected ("times" went from 1 to 0);
#  - the dialling side counts a failed connection (conn_failed), the
#    accepting side a refused REQ (req_rejected) when it was the one;
#  - every datagram arrives, in order: the first five over UD while the
#    connection is down, the next five, once host 0's backoff is over (1 s
#    after one failure, timed from when conn_failed was seen to count it),
#    over the connection it dials again (conn_active_up, a live
#    connection);
#  - both hosts back in datagram mode, rxe's object counts (rdma res show)
#    are what they were before: rxe's pools keep a leaked QP or CQ
#    referenced, where kmemleak cannot see it.
# round 1 runs the cases with the SRQ, round 0 without; each scenario runs
# one round, so that the two fit the runner's timeout side by side.  The
# runner's log check fails on any KASAN, lockdep or kmemleak report.
# The cm-teardown-race scenario runs three more cases from here: a packet
# over RC whose DMA mapping fails (tx_map_case), a failed accept whose REJ
# is held while the reaper runs (accept_race_case) and a stop that marks
# a connection being reaped (stop_race_case).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

F=/sys/kernel/debug/fail_function
[ -d "$F" ] || fail "no fail_function in this kernel"

# ff_arm FUNC N: the N-th call of FUNC from now returns -ENOMEM, once.
ff_arm() {
	echo "$1" > "$F/inject" || fail "$1 is not an injection point"
	printf '%#x' -12 > "$F/$1/retval"
	echo 100 > "$F/probability"
	echo 1 > "$F/interval"
	echo "$2" > "$F/space"
	echo 1 > "$F/times"
	# A stack for every injection would fail the log check.
	echo 0 > "$F/verbose"
}

ff_fired() {
	[ "$(cat "$F/times")" = 0 ]
}

ff_disarm() {
	echo > "$F/inject"
}

# A case failed: the connections and counters of both hosts explain it.
case_fail() {
	cm_dump
	fail "$@"
}

stat_above() {	# stat_above RDMADEV NAME VALUE
	[ "$(cm_stat "$1" "$2")" -gt "$3" ]
}

rxe_objects() {
	rdma res show | awk -v d="$1:" '$2 == d { $1 = $2 = ""; print }'
}

# objects_back DEV BASE: rxe may free an object a little later.
objects_back() {
	local end=$((SECONDS + 10)) now

	while now=$(rxe_objects "$1"); [ "$now" != "$2" ]; do
		[ $SECONDS -lt $end ] || fail "$1 has$now; before:$2"
		sleep 0.2
	done
}

connect_hosts() {
	set_mode ns0 "$IB0" connected
	set_mode ns1 "$IB1" connected
	static_neighbours
	path_ready ns0 "$IB0" 192.0.2.2 ns1
}

# failed_seen F0: host 0 counts a failed connection (conn_failed above
# F0); notes when it was seen and how many failed, for backoff_over.
failed_seen() {
	wait_for 30 "$IB0 to count a failed connection" \
		stat_above rxe0 conn_failed "$1"
	FAILED_AT=$EPOCHREALTIME
	FAILS=$(($(cm_stat rxe0 conn_failed) - $1))
}

# The backoff is not shown anywhere: it is computed from the counters.
# The peer's connection failed FAILS times in a row (its first, and every
# retry since); it sends over UD for 1, 2, 4 ... 64 s after the last
# failure (ipoib_cm_event_locked()), which happened before FAILED_AT.  So
# the backoff is over once that long, and half a second more (jiffies may
# lag this shell's clock a little under TCG), has passed since FAILED_AT.
backoff_secs() {
	local b=$((1 << (FAILS - 1)))

	echo $((b > 64 ? 64 : b))
}

backoff_over() {
	local now=$EPOCHREALTIME

	[ $((${now/./} - ${FAILED_AT/./})) -ge $(($(backoff_secs) * 1000000 + 500000)) ]
}

# recovered RXPID RXFILE UP0 WHAT: after host 0's backoff five more
# datagrams go out; all ten must have arrived in order (the first five
# over UD), over the connection host 0 dialled again (conn_active_up
# above UP0).
recovered() {
	local got

	[ "$FAILS" -ge 1 ] || case_fail "$4: no failure counted before the retry"
	wait_explain $(($(backoff_secs) + 10)) \
		"$IB0's backoff of $(backoff_secs) s after $FAILS failures" \
		'cm_dump; say "failure seen at $FAILED_AT, now $EPOCHREALTIME"' backoff_over
	udp_burst_tx ns0 192.0.2.2 7200 5
	wait "$1" || true
	got=$(tr '\n' ' ' < "$2")
	[ "$got" = "0 1 2 3 4 0 1 2 3 4 " ] ||
		case_fail "$4: datagrams arrived as: $got"
	stat_above rxe0 conn_active_up "$3" ||
		case_fail "$4: $IB0 did not dial again ($FAILS failures; sent $(backoff_secs) s after the failure was seen)"
	[ -n "$(conn_col rxe0 active live 1)" ] ||
		case_fail "$4: no live connection after the retry"
}

# case_start: both hosts connected-mode, the counters a failed dial
# moves noted (C_F0, C_R1, C_UP0), a receiver of ten datagrams on host 1
# (C_RX) for host 0 to send five to now and five after its backoff.
case_start() {
	connect_hosts
	C_F0=$(cm_stat rxe0 conn_failed)
	C_R1=$(cm_stat rxe1 req_rejected)
	C_UP0=$(cm_stat rxe0 conn_active_up)
	udp_burst_rx ns1 192.0.2.2 7200 10 /tmp/cf.rx
	C_RX=$!
	wait_udp ns1 7200
}

# case_recovered WHAT SIDE: after case_start, a failure on host SIDE:
# counted by host 0, and by host 1 if it was the one, and host 0's ten
# datagrams arrived in order (recovered).  The fault is disarmed.
case_recovered() {
	failed_seen "$C_F0"
	ff_disarm
	if [ "$2" = 1 ]; then
		stat_above rxe1 req_rejected "$C_R1" ||
			case_fail "$1: $IB1 counted no refused REQ"
	fi
	recovered "$C_RX" /tmp/cf.rx "$C_UP0" "$1"
}

# case_end: both hosts back in datagram mode, with no more rxe objects
# than before the cases.
case_end() {
	set_mode ns0 "$IB0" datagram
	set_mode ns1 "$IB1" datagram
	objects_back rxe0 "$BASE0"
	objects_back rxe1 "$BASE1"
}

# fault_case FUNC N SIDE: the N-th call of FUNC fails, on host SIDE.
fault_case() {
	local fn=$1 n=$2 side=$3

	case_start
	ff_arm "$fn" "$n"
	udp_burst_tx ns0 192.0.2.2 7200 5
	wait_for 30 "call $n of $fn to fail" ff_fired
	case_recovered "$fn #$n" "$side"
	say "$fn #$n (host $side): failed once, counted, recovered"
	case_end
}

ethtool_stat() {	# ethtool_stat NS IFACE COUNTER
	ip netns exec "$1" ethtool -S "$2" | awk -v n="$3:" '$1 == n { print $2 }'
}

# A packet over RC that cannot be DMA-mapped (rxe never fails a mapping:
# fail_function fails ipoib_tx_map() once) is dropped and counted as a
# send drop (drop_tx_no_mem, in tx_dropped), and its ring slot is left
# empty.  Host 0 then leaves connected mode at once: the teardown, which
# frees what the ring still holds, must not free that packet again
# (KASAN, read by the runner).  Precondition: the failure hit the RC send
# (the connection's own drop count went up); if a UD send took it
# (neighbour discovery), the case is tried again.
tx_map_case() {
	local try d0 t0 tx0

	connect_hosts
	in0 ping -c 1 -W 10 192.0.2.2 > /dev/null || case_fail "no ping before the mapping failure"
	for try in 1 2 3; do
		d0=$(conn_col rxe0 active live 13)
		[ -n "$d0" ] || case_fail "tx_map: no live connection from $IB0"
		t0=$(ethtool_stat ns0 "$IB0" drop_tx_no_mem)
		tx0=$(link_stat ns0 "$IB0" tx dropped)
		ff_arm ipoib_tx_map 1
		udp_burst_tx ns0 192.0.2.2 7201 1
		wait_for 10 "the mapping failure" ff_fired
		ff_disarm
		[ "$(conn_col rxe0 active live 13)" -gt "$d0" ] && break
		say "tx_map: try $try: the failure hit another send"
		[ "$try" -lt 3 ] || case_fail "tx_map: the failure never hit the RC send"
	done
	set_mode ns0 "$IB0" datagram
	say "tx_map: a packet over RC not mapped: drop_tx_no_mem $t0 -> $(ethtool_stat ns0 "$IB0" drop_tx_no_mem), tx_dropped $tx0 -> $(link_stat ns0 "$IB0" tx dropped)"
	[ "$(ethtool_stat ns0 "$IB0" drop_tx_no_mem)" = $((t0 + 1)) ] ||
		case_fail "tx_map: the unmapped packet not counted in drop_tx_no_mem"
	[ "$(link_stat ns0 "$IB0" tx dropped)" -gt "$tx0" ] ||
		case_fail "tx_map: the unmapped packet not in tx_dropped"
	case_end
}

# Host 1 cannot accept host 0's REQ (its REP is not sent: fail_function),
# hands the failure to its reaper and sends a REJ; that REJ is held
# (cm_hold on ib_send_cm_rej()), so the reaper runs while the callback
# still does.  The reaper must not destroy the CM id the callback runs on
# and gives back to the CM by returning non-zero: that was a double
# destroy (issue 15).  Precondition, while the REJ was held: the reaper
# finished with the connection (it left host 1's table) or was seen at
# work on it (its stack; it may wait there for an RCU grace period, which
# the held CPU keeps from ending, or in ib_destroy_cm_id() for the
# callback).  Then, as in fault_case: counted, and host 0 dials again
# after its backoff.
accept_race_case() {
	local hold=/sys/module/cm_hold/parameters tx

	case_start
	insmod "${IPOIB_CM_TOOLDIR:?}/cm_hold/cm_hold.ko" func=ib_send_cm_rej event=any
	echo 1 > $hold/count
	ff_arm ipoib_cm_send_rep 1
	# Not waited for while the REJ is held (its exit waits for RCU).
	udp_burst_tx ns0 192.0.2.2 7200 5 &
	tx=$!
	wait_explain 60 "host 1's REJ to be held" cm_dump hold_caught
	ff_fired || { echo 1 > $hold/release; case_fail "accept race: the REP did not fail"; }
	hold_release_when "accept race: host 1's REJ held while its reaper had the connection; letting it go" \
		reaper_had_it || {
		echo 1 > $hold/release
		case_fail "precondition: the reaper did nothing while host 1's REJ was held"
	}
	say "accept race: $SEEN"
	wait "$tx" || case_fail "accept race: the datagrams were not sent"
	rmmod cm_hold
	case_recovered "accept race" 1
	case_end
}

# Host 1's reaper finished with its accepted connection (gone from the
# table) or is seen at work (SEEN says which).
reaper_had_it() {
	local st

	if ! cm_conns rxe1 | matches ' passive '; then
		SEEN="the reaper finished with the connection"
	elif st=$(reaper_stack); then
		SEEN="the reaper at work: $(echo "$st" | sed -n 1,4p | tr '\n' ' ')"
	else
		return 1
	fi
}

# Host 0's REQ cannot be sent (fail_function): the connection is FAILED
# and its reaper tears it down, held (cm_hold) as it destroys the QP.
# Meanwhile host 0 leaves connected mode: the stop marks the connection
# CLOSING and, as it is being reaped already, queues no second reap.  Let
# go, the reaper must see CLOSING and take it out of the table, not keep
# it as FAILED (issue 15: a stop racing the reaper left a connection and
# its address handle behind; the stop's "connections left after stop"
# fails the run).  Precondition: FAILED when held, CLOSING before let go.
stop_race_case() {
	local hold=/sys/module/cm_hold/parameters tx st

	connect_hosts
	insmod "${IPOIB_CM_TOOLDIR:?}/cm_hold/cm_hold.ko" func=ib_destroy_qp_user event=any
	switch_writer ns0 "$IB0" datagram
	echo 1 > $hold/count
	ff_arm ipoib_cm_send_req 1
	udp_burst_tx ns0 192.0.2.2 7200 5 &
	tx=$!
	wait_explain 60 "host 0's reaper to be held" cm_dump hold_caught
	st=$(conn_col rxe0 active '*' 4)
	[ "$st" = failed ] || {
		echo 1 > $hold/release
		case_fail "precondition: host 0's connection $st, not failed, while its reaper was held"
	}
	switch_go
	hold_release_when "stop race: host 0's reaper held on a failed connection, the stop marked it closing; letting it go" \
		conn_state_is rxe0 closing || {
		st=$(conn_col rxe0 active '*' 4)
		echo 1 > $hold/release
		case_fail "precondition: the stop did not mark host 0's connection closing while its reaper was held ($st)"
	}
	wait "$SWITCH_PID" || case_fail "stop race: the mode switch failed"
	wait "$tx" || case_fail "stop race: the datagrams were not sent"
	ff_fired || case_fail "stop race: the REQ did not fail"
	ff_disarm
	rmmod cm_hold
	! cm_conns rxe0 | matches . ||
		case_fail "stop race: host 0 kept a connection after the stop: $(cm_conns rxe0)"
	case_end
}

# conn_state_is RDMADEV STATE: RDMADEV's active connection is in STATE.
conn_state_is() {
	[ "$(conn_col "$1" active '*' 4)" = "$2" ]
}

round() {
	local srq=$1 ready c

	say "== cm_srq=$srq"
	load_module cm_srq="$srq"
	hosts_up
	in0 ping -c 1 -W 10 192.0.2.2 > /dev/null || fail "no UD traffic before"
	BASE0=$(rxe_objects rxe0)
	BASE1=$(rxe_objects rxe1)
	if [ "$srq" = 1 ]; then
		ready=ipoib_cm_srq_qp_ready
	else
		ready=ipoib_cm_nosrq_qp_ready
	fi
	for c in "ipoib_cm_create_qp 1 0" "ipoib_cm_qp_init 1 0" \
		 "$ready 1 0" "ipoib_cm_send_req 1 0" \
		 "ipoib_cm_modify 1 0" "ipoib_cm_modify 2 0" \
		 "ipoib_cm_create_qp 2 1" "ipoib_cm_rx_modify 1 1" \
		 "$ready 2 1" "ipoib_cm_rx_modify 2 1" \
		 "ipoib_cm_send_rep 1 1"; do
		# shellcheck disable=SC2086
		fault_case $c
	done
	# Then, nothing half done: an exact transfer over RC.
	connect_hosts
	tcp_digest_check 8 || fail "an 8 MiB transfer arrived damaged or short"
	cm_conns rxe0 | matches ' active live ' || fail "the transfer did not go over RC"
	rxe_clean rxe0 rxe1
	unload_checked
	hosts_down
}
