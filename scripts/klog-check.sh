#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fail if a kernel log (or kmemleak report) shows a problem.
#
#   scripts/klog-check.sh FILE...
#
# Findings: KASAN, UBSAN, lockdep and other WARNINGs, BUGs (including
# sleeping in atomic context), Oopses, panics, hung tasks, soft lockups,
# RCU stalls, debugobjects reports, kmemleak suspects or a kmemleak that
# could not scan, a net device that cannot be unregistered, and the
# module's own warnings that something did not finish in time or was left
# behind (its teardown never ends silently).

patterns=(
	'BUG: '
	'WARNING: '
	'UBSAN: '
	'KASAN'
	'kernel BUG at'
	'Oops'
	'general protection fault'
	'Kernel panic'
	'blocked for more than'
	'soft lockup'
	'hard LOCKUP'
	'rcu_.* detected stalls'
	'ODEBUG: '
	'unreferenced object'
	'Kernel memory leak detector disabled'
	'kmemleak: scan failed'
	'Call Trace:'
	'unregister_netdevice: waiting for'
	'not flushed in time'
	'not polled in time'
	'connections left after stop'
	'receives never completed'
	'cannot move RC QP'
	'timed out'
	'left behind'
)

found=0
for f in "$@"; do
	[ -f "$f" ] || continue
	for p in "${patterns[@]}"; do
		if grep -E -n -- "$p" "$f" > /tmp/klog-check.$$ 2>/dev/null; then
			echo "kernel log finding ($p) in $f:"
			head -n 20 /tmp/klog-check.$$ | sed 's/^/    /'
			found=1
		fi
	done
done
rm -f /tmp/klog-check.$$
exit $found
