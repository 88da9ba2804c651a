#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 1500
# Allocation failures on the setup paths, injected by the kernel's own
# fault injection (failslab with /proc/thread-self/fail-nth): the N-th slab
# allocation of one write fails, for N = 1, 2, 3 ... until a write runs
# without meeting its N-th allocation.  The writes:
#  - "connected" into the mode file, with the shared SRQ and, after a
#    reload, with cm_srq=0;
#  - a P_Key into create_child.
# Then failures on the CM's paths, where no task of ours allocates:
# fail_function makes one call of a function the driver marks for it
# (ALLOW_ERROR_INJECTION) return -ENOMEM: the QP creation of a connection
# we open, the first receives of a no-SRQ QP we open, and the REP of a
# connection we accept (with SRQ and without).  Each time a one-way UDP burst that would open
# the connection arrives complete and in order (held, then sent over UD),
# the failure is counted on the right side, and the next dial, once the
# backoff is over, brings the connection up.
# After every injected failure the write either succeeded or failed with an
# error (never half done: the mode reads back what the result says), UD
# traffic still flows, and the log stays clean (the VM runner fails on any
# KASAN, lockdep or kmemleak report).  Then a clean switch and an exact
# transfer over RC, and rmmod with nothing left.
. "$(dirname "$0")/../lib.sh"

# The memory manager reports some failed allocations (vmalloc) with a
# stack: expected here, and only those (see klog-check.sh).
touch "$VMOUT/expect-alloc-failures"
FS=/sys/kernel/debug/failslab
[ -d "$FS" ] || fail "no failslab in this kernel"
# fail-nth decides when; failslab must also fail sleeping allocations and
# stay quiet (a stack trace for every injection would fail the log check).
echo N > "$FS/ignore-gfp-wait"
echo 0 > "$FS/verbose"

# fail_write NS FILE WORD N: write WORD into FILE (relative to
# /sys/class/net, in namespace NS) with the N-th slab allocation of the
# write failing.  Prints "injected ok|ERRNO" or "clean ok|ERRNO".
fail_write() {
	ip netns exec "$1" python3 - "$2" "$3" "$4" <<'PY'
import errno, os, sys
path, word, n = sys.argv[1], sys.argv[2].encode(), sys.argv[3]
os.chdir("/sys/class/net")
fd = os.open(path, os.O_WRONLY)
nth = os.open("/proc/thread-self/fail-nth", os.O_RDWR)
os.write(nth, n.encode())
try:
    os.write(fd, word)
    res = "ok"
except OSError as e:
    res = errno.errorcode.get(e.errno, str(e.errno))
left = int(os.pread(nth, 32, 0))
os.write(nth, b"0")
print("clean" if left else "injected", res)
PY
}

# The N values tried: every one up to 40, then 30 % further each time.
next_n() { if [ "$1" -lt 40 ]; then echo $(($1 + 1)); else echo $(($1 * 13 / 10)); fi; }

# sweep NAME NS FILE WORD CHECK UNDO: the fail-nth sweep of one write.
# CHECK RESULT verifies the state after a write that returned RESULT; UNDO
# puts things back after a write that succeeded.
sweep() {
	local name=$1 ns=$2 file=$3 word=$4 check=$5 undo=$6
	local n=1 out how res injected=0 failed=0

	while :; do
		out=$(fail_write "$ns" "$file" "$word" "$n") ||
			fail "$name: the writer died at N=$n"
		read -r how res <<< "$out"
		[ "$how" = injected ] || break
		injected=$((injected + 1))
		[ "$res" = ok ] || failed=$((failed + 1))
		"$check" "$res" || fail "$name: N=$n ($res): state after the write is wrong"
		[ "$res" != ok ] || "$undo" || fail "$name: N=$n: cannot undo"
		# UD must still work: a ping now and then (each one is slow).
		if [ $((n % 8)) = 0 ]; then
			in0 ping -c 1 -W 5 192.0.2.2 > /dev/null ||
				fail "$name: N=$n: no UD traffic after the failure"
		fi
		n=$(next_n "$n")
		[ "$n" -lt 100000 ] || fail "$name: no end to the allocations"
	done
	[ "$res" = ok ] || fail "$name: the write without a fault failed: $res"
	say "$name: $injected faults injected ($((n - 1)) allocations or more), $failed writes failed with an error, the rest succeeded"
	[ "$failed" -gt 0 ] || fail "$name: no injected fault made the write fail"
	"$check" ok || fail "$name: state after the clean write is wrong"
	"$undo" || fail "$name: cannot undo the clean write"
}

mode_check() {
	local mode

	mode=$(get_mode ns0 "$IB0")
	if [ "$1" = ok ]; then
		[ "$mode" = connected ] && [ "$(link_mtu ns0 "$IB0")" = 65520 ]
	else
		[ "$mode" = datagram ] && [ "$(link_mtu ns0 "$IB0")" = 4092 ] &&
			! grep -q '^# connected' "$(cm_debugfs rxe0)/connections" 2>/dev/null
	fi
}
mode_undo() { set_mode ns0 "$IB0" datagram; }

child_check() {
	if [ "$1" = ok ]; then
		ip -n ns0 link show "$IB0.ffff" > /dev/null 2>&1
	else
		! ip -n ns0 link show "$IB0.ffff" > /dev/null 2>&1
	fi
}
child_undo() { ns_sysfs ns0 "echo 0xffff > $IB0/delete_child"; }

FF=/sys/kernel/debug/fail_function
# ff_arm FUNCTION: its next call returns -ENOMEM, once.
ff_arm() {
	echo "$1" > "$FF/inject" || fail "fail_function cannot take $1"
	printf '%#x' -12 > "$FF/$1/retval"
	echo 100 > "$FF/probability"
	echo 0 > "$FF/interval"
	echo 1 > "$FF/times"
	echo 0 > "$FF/verbose"
}
ff_disarm() { echo > "$FF/inject"; }

# burst FROM TO ADDR PORT: 40 numbered datagrams one way only (no reply
# that would make the other side dial); all must arrive, in order.
burst() {
	udp_burst_rx "$2" "$3" "$4" 40 /tmp/burst.rx
	local rpid=$!
	wait_udp "$2" "$4"
	udp_burst_tx "$1" "$3" "$4" 40
	wait $rpid
	[ "$(seq 0 39 | tr '\n' ' ')" = "$(tr '\n' ' ' < /tmp/burst.rx)" ] ||
		fail "burst $1 -> $2 incomplete or out of order: $(tr '\n' ' ' < /tmp/burst.rx)"
}

# fail_dial FUNC FROM TO ADDR PORT SIDE STAT: FUNC fails once while FROM's
# burst opens a connection to TO; STAT of SIDE's interface counts it, and
# after the backoff a second burst goes over a live connection.
fail_dial() {
	local func=$1 from=$2 to=$3 addr=$4 port=$5 side=$6 stat=$7
	local before tx0 src=rxe${2#ns}

	before=$(cm_stat "$side" "$stat")
	ff_arm "$func"
	burst "$from" "$to" "$addr" "$port"
	wait_for 20 "$stat counted on $side" sh -c \
		"[ \$(awk '\$1 == \"$stat\" {print \$2}' $(cm_debugfs "$side")/stats) -gt $before ]"
	[ "$(cat "$FF/times")" = 0 ] || fail "$func was never called"
	ff_disarm
	say "$func failed once: $side $stat $before -> $(cm_stat "$side" "$stat")"
	sleep 2		# the backoff after the first failure is 1 s
	tx0=$(cm_stat "$src" rc_tx_packets)
	burst "$from" "$to" "$addr" $((port + 1))
	burst "$from" "$to" "$addr" $((port + 2))
	[ "$(cm_stat "$src" rc_tx_packets)" -gt "$tx0" ] ||
		fail "after $func failed, no connection came up $from -> $to"
}

fabric_single
load_module
hosts_up
in0 ping -c 1 -W 10 192.0.2.2 > /dev/null || fail "no UD traffic before"
sweep "mode, SRQ" ns0 "$IB0/mode" connected mode_check mode_undo
sweep "create_child" ns0 "$IB0/create_child" 0xffff child_check child_undo

set_mode ns0 "$IB0" connected || fail "connected mode (ns0)"
set_mode ns1 "$IB1" connected || fail "connected mode (ns1)"
static_neighbours
# The opening side always reaches these functions first: its own QP is
# what fails.  Only the REP is the accepting side's alone.
fail_dial ipoib_cm_create_qp ns0 ns1 192.0.2.2 6000 rxe0 conn_failed
fail_dial ipoib_cm_send_rep ns1 ns0 192.0.2.1 6010 rxe0 req_rejected

# The same in the no-SRQ backend.
unload_checked
hosts_down
load_module cm_srq=0
hosts_up
in0 ping -c 1 -W 10 192.0.2.2 > /dev/null || fail "no UD traffic (cm_srq=0)"
sweep "mode, no SRQ" ns0 "$IB0/mode" connected mode_check mode_undo
set_mode ns0 "$IB0" connected || fail "connected mode (ns0, no SRQ)"
set_mode ns1 "$IB1" connected || fail "connected mode (ns1, no SRQ)"
static_neighbours
fail_dial ipoib_cm_nosrq_qp_ready ns0 ns1 192.0.2.2 6030 rxe0 conn_failed
fail_dial ipoib_cm_send_rep ns1 ns0 192.0.2.1 6040 rxe0 req_rejected

# Nothing was left half done: connected mode works and is exact.
in0 ping -c 2 -W 10 192.0.2.2 > /dev/null || fail "ping in connected mode"
tcp_digest_check 8 || fail "an 8 MiB transfer arrived damaged or short"
cm_conns rxe0 | grep -q ' active live ' || fail "the transfer did not go over RC"
rxe_clean rxe0 rxe1
unload_checked
say "fault-inject: ok"
