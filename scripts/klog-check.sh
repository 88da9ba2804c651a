#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fail if a kernel log (or kmemleak report) shows a problem.
#
#   scripts/klog-check.sh [--alloc-failures] [--leaks] [--no-last-wqe] FILE...
#   scripts/klog-check.sh --list
#
# Findings: KASAN, UBSAN, lockdep and other WARNINGs, BUGs (including
# sleeping in atomic context), Oopses, panics, hung tasks, soft lockups,
# RCU stalls, debugobjects reports, kmemleak suspects or a kmemleak that
# could not scan, a net device that cannot be unregistered, and the
# module's own warnings that something did not finish in time or was left
# behind (its teardown never ends silently): a send or receive ring not
# flushed or drained, a path resolution still in flight, no Last WQE
# Reached event in time, a transmit timeout, connections or QPs left.
#
# --no-last-wqe: the run was on a kernel whose rdma_rxe never raises Last
# WQE Reached (before 6.5: c3e1bf626eb3 added it), so the driver's notice
# that an SRQ teardown went on without it is expected.
#
# --alloc-failures: the run injected allocation failures on purpose, so the
# memory manager's own report of a failed allocation (a "page allocation
# failure:" or "vmalloc error:" line, its stack up to </TASK>) is expected
# and skipped; everything else in the log is still checked, stacks of any
# other origin included.

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
	'timed out'
	'left behind'
)

# The module's own warnings that something did not finish in time or was
# left behind: each a fixed piece of one netdev_warn() of the sources, which
# scripts/host-tests/klog-check.sh checks (every one is in a source and
# matches a sample line).  --list prints them.
module_patterns=(
	'not flushed in time'
	'UD QP not drained in time'
	'path resolutions still in flight'
	'no Last WQE Reached event in'
	'transmit timeout: '
	'connections left after stop'
	'receives never completed'
	'cannot move RC QP'
	'receives not drained'
	'completions may still arrive'
	'RC QPs were leaked'
	'SRQ still used by'
)
patterns+=("${module_patterns[@]}")

# --leaks: the run made teardown leak QPs on purpose (the qp_err_fail
# tool); the driver's own warnings about that leak are expected.
leak_patterns=(
	'cannot move RC QP'
	'completions may still arrive'
	'receives never completed'
	'RC QPs were leaked'
	'SRQ still used by'
)
alloc_failures=0
while [ $# -gt 0 ]; do
	case $1 in
	--alloc-failures) alloc_failures=1 ;;
	--list)
		printf '%s\n' "${module_patterns[@]}"
		exit 0
		;;
	--no-last-wqe)
		for i in "${!patterns[@]}"; do
			[ "${patterns[$i]}" != 'no Last WQE Reached event in' ] ||
				unset 'patterns[i]'
		done
		;;
	--leaks)
		for p in "${leak_patterns[@]}"; do
			for i in "${!patterns[@]}"; do
				[ "${patterns[$i]}" != "$p" ] || unset 'patterns[i]'
			done
		done
		;;
	*) break ;;
	esac
	shift
done

# The log to check: FILE itself, or without the expected allocation
# failure reports.  Line numbers stay those of FILE.
log_of() {
	if [ $alloc_failures = 1 ]; then
		awk '/(page allocation failure|vmalloc error): / { skip = 1 }
		     !skip { print NR ":" $0 }
		     skip && /<\/TASK>/ { skip = 0 }' "$1"
	else
		grep -n '' "$1"
	fi
}

found=0
for f in "$@"; do
	[ -f "$f" ] || continue
	for p in "${patterns[@]}"; do
		if log_of "$f" | grep -E -- "^[0-9]+:.*$p" > /tmp/klog-check.$$ 2>/dev/null; then
			echo "kernel log finding ($p) in $f:"
			head -n 20 /tmp/klog-check.$$ | sed 's/^/    /'
			found=1
		fi
	done
done
rm -f /tmp/klog-check.$$
exit $found
