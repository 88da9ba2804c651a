#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# klog-check.sh --alloc-failures skips the memory manager's reports of
# failed allocations, --leaks the driver's warnings of a leaked QP, and
# nothing else: a report alone passes only with
# the flag, a stack of any other origin fails with it too, and so does a
# finding right after a skipped report.
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
[ $rc = 0 ] && echo "klog-check: allocation-failure reports and leak warnings skipped only with their flags, nothing else"
exit $rc
