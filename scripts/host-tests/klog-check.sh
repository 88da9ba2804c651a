#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# klog-check.sh --alloc-failures skips the memory manager's reports of
# failed allocations, --leaks the driver's warnings of a leaked QP,
# --no-last-wqe its notice of an SRQ teardown without Last WQE Reached, and
# nothing else: a report alone passes only with
# the flag, a stack of any other origin fails with it too, and so does a
# finding right after a skipped report.
#
# And the module's own warnings that something did not finish in time or
# was left behind: every pattern klog-check.sh has for them (--list) is a
# fixed piece of a message in the sources, each fails the check on a
# sample line as the module prints it and names its pattern, and the
# module's ordinary messages pass.
set -uo pipefail
TOPDIR=$(cd "$(dirname "$0")/../.." && pwd)
check() { bash "$TOPDIR/scripts/klog-check.sh" "$@" > /dev/null; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0

cat > "$tmp/alloc" <<'LOG'
[  119.059867] python3: vmalloc error: size 65920, vm_struct allocation failed, mode:0xdc0(GFP_KERNEL|__GFP_ZERO), nodemask=(null)
[  119.070672] Call Trace:
[  119.070700]  <TASK>
[  119.071326]  warn_alloc+0x1aa/0x300
[  119.071400]  </TASK>
[  119.080000] Mem-Info:
[  119.116169] ib0: cannot start connected mode: -12
LOG
{ cat "$tmp/alloc"; echo '[  120.000000] WARNING: CPU: 1 PID: 1 at foo.c:1 bar+0x1/0x2'; } > "$tmp/alloc-warn"
{ cat "$tmp/alloc"; printf '%s\n' '[  121.000000] Call Trace:' '[  121.000001]  <TASK>' \
	'[  121.000002]  dump_stack_lvl+0x62/0x90' '[  121.000003]  </TASK>'; } > "$tmp/alloc-trace"

if check "$tmp/alloc"; then
	echo "FAIL: an allocation failure's stack passed without --alloc-failures"; rc=1
fi
check --alloc-failures "$tmp/alloc" ||
	{ echo "FAIL: an allocation failure report failed with --alloc-failures"; rc=1; }
if check --alloc-failures "$tmp/alloc-warn"; then
	echo "FAIL: a WARNING after a skipped report passed"; rc=1
fi
if check --alloc-failures "$tmp/alloc-trace"; then
	echo "FAIL: a stack of another origin passed with --alloc-failures"; rc=1
fi

# --leaks: the driver's leak warnings pass with it, nothing else does.
cat > "$tmp/leak" <<'LOG'
[  201.000001] ipoib_cm: ib0: cannot move RC QP 0x000012 to ERR: -5
[  201.000002] ipoib_cm: ib0: RC QP 0x000012: completions may still arrive: QP, CQ and buffers leaked
[  203.000003] ipoib_cm: ib0: 1 RC QPs were leaked: their receive CQ is leaked too
LOG
{ cat "$tmp/leak"; echo '[  204.000000] ipoib_cm: ib0: RC QP 0x000013: sends not flushed in time'; } > "$tmp/leak-timeout"
if check "$tmp/leak"; then
	echo "FAIL: the leak warnings passed without --leaks"; rc=1
fi
check --leaks "$tmp/leak" ||
	{ echo "FAIL: the leak warnings failed with --leaks"; rc=1; }
if check --leaks "$tmp/leak-timeout"; then
	echo "FAIL: a teardown timeout passed with --leaks"; rc=1
fi
if check --leaks --alloc-failures "$tmp/alloc-warn"; then
	echo "FAIL: a WARNING passed with both flags"; rc=1
fi

# --no-last-wqe: the notice of an SRQ teardown without the event passes
# with it; a teardown timeout beside it does not.
printf '%s\n' '[  251.000001] ib0: RC QP 0x000015: no Last WQE Reached event in 2000 ms: relying on drain markers alone' \
	> "$tmp/no-last-wqe"
{ cat "$tmp/no-last-wqe"; echo '[  252.000000] ib0: RC QP 0x000016: sends not flushed in time'; } \
	> "$tmp/no-last-wqe-timeout"
if check "$tmp/no-last-wqe"; then
	echo "FAIL: the Last WQE notice passed without --no-last-wqe"; rc=1
fi
check --no-last-wqe "$tmp/no-last-wqe" ||
	{ echo "FAIL: the Last WQE notice failed with --no-last-wqe"; rc=1; }
if check --no-last-wqe "$tmp/no-last-wqe-timeout"; then
	echo "FAIL: a teardown timeout passed with --no-last-wqe"; rc=1
fi

# One sample line per pattern of the module's warnings, as the module
# prints it (netdev_warn: the interface's name first).
samples=(
	'[  301.000001] ib0: RC QP 0x000012: sends not flushed in time'
	'[  302.000002] ib1: UD QP not drained in time: 3 receives, 1 sends left'
	'[  303.000003] ib0: path resolutions still in flight'
	'[  304.000004] ib0: RC QP 0x000015: no Last WQE Reached event in 2000 ms: relying on drain markers alone'
	'[  305.000005] ib1: transmit timeout: 12 sends outstanding'
	'[  306.000006] ib0: 2 connections left after stop'
	'[  307.000007] ib0: RC QP 0x000016: 5 receives never completed'
	'[  308.000008] ib0: cannot move RC QP 0x000017 to ERR: -5'
	'[  309.000009] ib0: RC QP 0x000018: receives not drained: -110'
	'[  310.000010] ib0: RC QP 0x000019: completions may still arrive: QP, CQ and buffers leaked'
	'[  311.000011] ib0: 1 RC QPs were leaked: their receive CQ is leaked too'
	'[  312.000012] ib0: SRQ still used by 1 leaked QPs: SRQ and its buffers leaked'
)
mapfile -t mpats < <(bash "$TOPDIR/scripts/klog-check.sh" --list)
# Every sample fails the check.
for line in "${samples[@]}"; do
	printf '%s\n' "$line" > "$tmp/sample"
	if check "$tmp/sample"; then
		echo "FAIL: '$line' passed the check"; rc=1
	fi
done
# Every pattern is in a message of the sources and reported for a sample.
for p in "${mpats[@]}"; do
	if ! grep -F -- "$p" "$TOPDIR"/*.c | grep -q '"'; then
		echo "FAIL: '$p' is in no message of the sources"; rc=1
	fi
	n=0
	for line in "${samples[@]}"; do
		[[ "$line" == *"$p"* ]] || continue
		n=$((n + 1))
		printf '%s\n' "$line" > "$tmp/sample"
		bash "$TOPDIR/scripts/klog-check.sh" "$tmp/sample" > "$tmp/out"
		grep -qF "kernel log finding ($p)" "$tmp/out" ||
			{ echo "FAIL: '$line' not reported as ($p)"; rc=1; }
	done
	[ $n -ge 1 ] || { echo "FAIL: no sample line for '$p'"; rc=1; }
done
# The module's ordinary messages, a clean teardown included, pass.
cat > "$tmp/clean" <<'LOG'
[   52.851063] ib0: mode connected, MTU 65520
[   53.000000] ib0: carrier on
[   94.471975] ib0: connected mode stopped: 1 connections closed in 44 ms
[   95.000000] ib1: UD QP in error: restarting it
[   96.000000] ib0: port 1 is ACTIVE
LOG
check "$tmp/clean" || { echo "FAIL: the module's ordinary messages failed the check"; rc=1; }

[ $rc = 0 ] && echo "klog-check: allocation-failure reports, leak warnings and the Last WQE notice skipped only with their flags, nothing else; ${#mpats[@]} module warnings each in the sources and caught on a sample line"
exit $rc
