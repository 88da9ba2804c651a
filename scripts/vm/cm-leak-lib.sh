# SPDX-License-Identifier: GPL-2.0
# The body of the cm-leak-srq and cm-leak-nosrq scenarios.  Sourced.
#
# Teardown leaks a QP it cannot show done, and what follows must hold.
# The qp_err_fail tool (scripts/tools/qp_err_fail) makes the next move of
# one of rxe0's RC QPs to ERR report failure to its caller: the QP does
# reach ERR, the driver is told it did not, so it must leak the QP rather
# than destroy it.  fail_function makes host 0's first dial fail
# (ipoib_cm_modify #1), so the connection torn down, and leaked, is a
# FAILED one holding five datagrams.  Then:
#  - precondition: the tool fired once, the driver counts one leaked QP;
#  - the failed connection's backoff survives its leak: a QP-less FAILED
#    connection to the peer is in the table at once, before any packet;
#  - the five held datagrams arrive over UD, and five more, sent after
#    the backoff, over the connection dialled again, all ten in order,
#    with no RC retry exhausted in rxe's counters;
#  - without the SRQ, the leaked QP's receive, flushed by ERR and held back
#    (host 0's NAPI held) until the QP is leaked, gives its share of
#    cm_nosrq_mem back once it completes: what stays in use is the leaked
#    ring's own bookkeeping;
#  - the one leak is host 0's, of one QP;
#  - back in datagram mode, UD still carries traffic, and the leak keeps
#    the module loaded: rmmod is refused (the leaked QP's handlers are
#    the module's code).
# The scenario creates /tmp/vmout/expect-leaks: the log check then
# expects the driver's leak warnings; the scenario checks they appeared.
. "$(dirname "${BASH_SOURCE[0]}")/cm-faults-lib.sh"

QEF=/sys/module/qp_err_fail/parameters

leaked_qps() {
	sed -n 's/^# leaked_qps \([0-9]*\) .*/\1/p' "$(cm_debugfs "$1")/connections"
}

nosrq_bufs() {
	sed -n 's/^# leaked_qps [0-9]* nosrq_rx_bufs \([0-9-]*\)$/\1/p' \
		"$(cm_debugfs "$1")/connections"
}

# The failed connection in rxe0's table has no QP: the leaked one left.
heir_in_table() {
	[ "$(conn_col rxe0 active failed 5)" = 0x000000 ]
}

leak_round() {
	local srq=$1 f0 up0 rx

	touch "$VMOUT/expect-leaks"
	load_module cm_srq="$srq"
	insmod "${IPOIB_CM_TOOLDIR:?}/qp_err_fail/qp_err_fail.ko" dev=rxe0
	hosts_up
	in0 ping -c 1 -W 10 192.0.2.2 > /dev/null || fail "no UD traffic before"
	connect_hosts
	[ "$(leaked_qps rxe0)" = 0 ] || fail "a QP leaked before the fault"
	f0=$(cm_stat rxe0 conn_failed)
	up0=$(cm_stat rxe0 conn_active_up)
	udp_burst_rx ns1 192.0.2.2 7200 10 /tmp/cl.rx
	rx=$!
	wait_udp ns1 7200
	# Without the SRQ the leaked QP's receive, flushed by ERR, must come
	# back after the leak (orphaned), not before it (set aside, then
	# freed with the ring): host 0's NAPI is held until then.
	[ "$srq" = 1 ] || napi_hold ns0 "$IB0"
	ff_arm ipoib_cm_modify 1
	echo 1 > "$QEF/count"
	udp_burst_tx ns0 192.0.2.2 7200 5
	wait_for 30 "the first dial to fail" ff_fired
	ff_disarm
	failed_seen "$f0"
	wait_for 30 "the move to ERR to be reported failed" \
		sh -c "[ \$(cat $QEF/fired) = 1 ]"
	wait_for 30 "$IB0 to count the leaked QP" \
		sh -c "grep -q '^# leaked_qps 1 ' $(cm_debugfs rxe0)/connections"
	dmesg | matches 'completions may still arrive: QP, CQ and buffers leaked' ||
		case_fail "no leak warning"
	# The leaked connection leaves the table and a QP-less FAILED one
	# (QPN 0) takes its place at once: the backoff stays.
	wait_for 10 "a QP-less failed connection to keep the backoff" \
		heir_in_table
	if [ "$srq" = 0 ]; then
		# Precondition: the leak orphaned receives still out; the heir
		# has none.  The leaked ring's bookkeeping stays counted for
		# good; each orphaned receive, once it completes, is given back.
		orphans=$(dmesg | sed -n 's/.*: \([0-9]*\) receives never completed$/\1/p' | sed -n '$p')
		held=$(nosrq_bufs rxe0)
		napi_release
		[ -n "$orphans" ] && [ "$orphans" -gt 0 ] ||
			case_fail "precondition: no receive orphaned by the leak"
		want=$((held - orphans))
		say "leak (cm_srq=0): $orphans receives orphaned, budget in use $held, the leaked ring's own $want"
		[ "$want" -gt 0 ] || case_fail "the leaked ring is not counted ($held in use)"
		wait_for 30 "the orphaned receives to give their budget back ($held in use, want $want)" \
			sh -c "grep -q ' nosrq_rx_bufs $want\$' $(cm_debugfs rxe0)/connections"
	fi
	recovered "$rx" /tmp/cl.rx "$up0" "leak (cm_srq=$srq)"
	say "leak (cm_srq=$srq): backoff kept, held datagrams over UD, dialled again"
	# The leaked QP never left INIT (its move to RTR was the failure) and
	# the peer's never left RTR: neither sent anything over RC.  The
	# traffic over the connection dialled again exhausted no RC retry.
	rxe_clean rxe0 rxe1

	# Only the leak the tool made: one QP, on host 0.
	[ "$(leaked_qps rxe1)" = 0 ] || fail "host 1 leaked a QP too"
	[ "$(leaked_qps rxe0)" = 1 ] || fail "host 0 leaked $(leaked_qps rxe0) QPs"
	[ "$(klog_count 'completions may still arrive')" = 1 ] ||
		fail "more than one QP leaked"
	set_mode ns0 "$IB0" datagram
	set_mode ns1 "$IB1" datagram
	dmesg | matches 'RC QPs were leaked' || fail "no warning of the leak at stop"
	in0 ping -c 1 -W 10 192.0.2.2 > /dev/null || fail "no UD traffic after the leak"
	if rmmod ipoib_cm 2> /tmp/rmmod.err; then
		fail "rmmod succeeded with a leaked QP that runs the module's code"
	fi
	[ -d /sys/module/ipoib_cm ] || fail "the module is gone"
	say "leak (cm_srq=$srq): UD still works, rmmod refused: $(cat /tmp/rmmod.err)"
}
