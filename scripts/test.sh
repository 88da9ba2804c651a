#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every test of the project, from a fresh Debian 12 machine:
#   - installs the packages it needs and builds the test kernels (cached);
#   - builds ipoib_cm.ko with W=1 against Linux 6.1 (Debian's headers),
#     6.12 and 7.2 (Debian's linux-source packages);
#   - checkpatch --strict and sparse on the sources;
#   - boots the debug kernels under QEMU and runs the KUnit suites and
#     every VM scenario in scripts/vm/tests/, each in a fresh VM whose
#     kernel log must stay clean: each scenario once, the core ones on
#     the 6.1 debug kernel (ON_61 below), core (all of them, cut down, in
#     one VM) on 7.2 (ON_72), the others on 6.12;
#   - boots Debian 12's own kernel package (scripts/stock-kernel.sh),
#     installs the module there by the admin guide's DKMS recipe and runs
#     the datagram and core scenarios with it and the kernel's RDMA
#     modules loaded by modprobe (stock-dkms; core: connected mode, SRQ
#     and not, exact transfers, the RTU lost, teardown and modprobe -r).
#     stock-datagram and stock-rtr, named only, run those scenarios with
#     the module built against the kernel's headers package.
#     scripts/test.sh debug61-NAME and debug72-NAME run scenario NAME on
#     the 6.1 or 7.2 debug kernel, built like the 6.12 one
#     (scripts/vm/on-kernel.sh); a plain NAME runs it on 6.12.
# The static checks, the KUnit VM and the scenarios share VM_JOBS slots
# (default: one per host core), longest first by the previous run's times
# ($CACHE/test-durations; scripts/test-durations for the jobs it lacks); the two-VM
# scenarios come last.  Results are
# printed in a fixed order, a failure with the end of its log.
# Ends with the line "N passed, N failed"; exits non-zero if any failed.
#
#   scripts/test.sh [scenario...]     (default: all scenarios)

set -uo pipefail
. "$(dirname "$0")/lib.sh"

cd "$TOPDIR"
LOGDIR=${IPOIB_CM_LOGDIR:-$TOPDIR/out/test}
rm -rf "$LOGDIR"
mkdir -p "$LOGDIR"

passed=0
failed=0
start=$SECONDS

# Results are recorded in files (jobs run in the background) and printed
# by report: "NAME<TAB>STATUS<TAB>LOG[<TAB>LOG...]".
RESULTS=$LOGDIR/results-prelude

record() {
	local IFS=$'\t'

	echo "$*" >> "$RESULTS"
}

# show_tail FILE: the end of a log, control characters removed, indented.
show_tail() {
	[ -s "$1" ] || return 0
	echo "     -- $1:"
	tail -n "${2:-20}" "$1" | tr -d '\r' |
		sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/[[:cntrl:]]//g; s/^/     | /'
}

report() {
	local name rc logs

	[ -f "$1" ] || return 0
	while IFS=$'\t' read -r name rc logs; do
		if [ "$rc" = 0 ]; then
			echo "ok   $name"
			passed=$((passed + 1))
			continue
		fi
		echo "FAIL $name (see ${logs%%$'\t'*})"
		failed=$((failed + 1))
		for f in $logs; do
			show_tail "$f"
		done
	done < "$1"
}

# run_test NAME COMMAND...: one test, its output in $LOGDIR/NAME.log.
run_test() {
	local name=$1 log t0=$SECONDS rc
	shift
	log=$LOGDIR/${name//\//_}.log
	"$@" > "$log" 2>&1
	rc=$?
	echo "$name: $((SECONDS - t0)) s" >> "$LOGDIR/durations"
	record "$name" $rc "$log"
}

finish() {
	report "$RESULTS"
	sort -t: -k2 -rn "$LOGDIR/durations" 2>/dev/null | sed -n 1,8p |
		sed 's/^/     slowest: /'
	echo "test time: $((SECONDS - start)) s"
	echo "$passed passed, $failed failed"
	[ $failed = 0 ]
	exit
}

if ! bash scripts/install-deps.sh > "$LOGDIR/install-deps.log" 2>&1; then
	record install-deps 1 "$LOGDIR/install-deps.log"
	finish
fi

# Kernels: 6.12 is built in full and boots the VM; 7.2 is configured and
# prepared for module builds; 6.1 is Debian 12's own headers package.
log "preparing kernels (cached in $CACHE)"
k612=$(bash scripts/build-kernel.sh 6.12 debug 2> "$LOGDIR/kernel-6.12.log")
record kernel/6.12-debug $? "$LOGDIR/kernel-6.12.log"
k72=$(bash scripts/build-kernel.sh --prepare 7.2 debug 2> "$LOGDIR/kernel-7.2.log")
record kernel/7.2-prepare $? "$LOGDIR/kernel-7.2.log"
k61=$(ls -d /usr/src/linux-headers-6.1.*-amd64 2>/dev/null | sort -V | tail -n1)
[ -n "$k61" ]
record kernel/6.1-headers $? "$LOGDIR/install-deps.log"

# What the VMs need first: the module for the VM's kernel, and the verbs
# program the malformed-frames scenario sends with.
BUILD=$TOPDIR/build
if [ -n "$k612" ]; then
	run_test build/6.12 bash scripts/build-module.sh "$k612" "$BUILD/6.12"
else
	record build/6.12 1 "$LOGDIR/kernel-6.12.log"
fi
run_test build/ud_inject bash scripts/build-tools.sh "$k612" "$BUILD/tools" \
	ud_inject
run_test build/cm_inject bash scripts/build-tools.sh "$k612" "$BUILD/tools" \
	cm_inject
run_test build/qp_err_fail bash scripts/build-tools.sh "$k612" "$BUILD/tools" \
	qp_err_fail
run_test build/cm_hold bash scripts/build-tools.sh "$k612" "$BUILD/tools" \
	cm_hold

# The other builds and the style and static checks, as one job.
static_checks() {
	local v ver kdir src612 f

	for v in 6.1:$k61 7.2:$k72; do
		ver=${v%%:*}
		kdir=${v#*:}
		if [ -z "$kdir" ]; then
			record "build/$ver" 1 "$LOGDIR/kernel-$ver.log"
			continue
		fi
		run_test "build/$ver" bash scripts/build-module.sh "$kdir" \
			"$BUILD/$ver"
	done
	# dkms add + dkms build, as an administrator would, in a private
	# DKMS tree.
	run_test dkms/6.1 bash scripts/dkms-build.sh "$k61"

	src612=$(bash scripts/debian-source.sh 6.12 2>/dev/null)
	for f in $(git ls-files '*.c' '*.h' 2>/dev/null ||
		   ls ./*.[ch] kunit/*.[ch]); do
		run_test "checkpatch/$f" perl "$src612/scripts/checkpatch.pl" \
			--strict --no-tree --quiet --show-types -f "$f"
	done
	# The admin guide covers every parameter, file, counter and
	# tracepoint.
	run_test docs bash scripts/check-docs.sh
	run_test host/mirror bash scripts/host-tests/mirror.sh
	run_test host/klog-check bash scripts/host-tests/klog-check.sh
	# sparse over every source, on the objects build/6.12 left.
	if [ -f "$BUILD/6.12/ipoib_cm.ko" ]; then
		run_test sparse/6.12 bash scripts/build-module.sh --in-place \
			"$k612" "$BUILD/6.12" C=2
	else
		record sparse/6.12 1 "$LOGDIR/build_6.12.log"
	fi
}

# A scenario may ask for more than the runner's 900 s: a line
# "# vm-timeout: SECONDS" in its header.  vm_timeout SCRIPT prints it.
vm_timeout() {
	local secs

	secs=$(sed -n 's/^# vm-timeout: *\([0-9]*\)$/\1/p' "$1" 2>/dev/null | sed -n 1p)
	echo "${secs:-900}"
}

vm() {
	local out=$1
	shift
	bash scripts/vm-run.sh -k "$k612" -o "$out" -t "$(vm_timeout "$1")" \
		-e IPOIB_CM_MODDIR="$BUILD/6.12" \
		-e IPOIB_CM_TOOLDIR="$BUILD/tools" -e IPOIB_CM_KDIR="$k612" -- "$@"
}

# vm_test NAME: scenarios/vm/tests/NAME.sh in a fresh VM.
vm_test() {
	local name=$1 t0=$SECONDS rc out=$LOGDIR/vm-$1

	vm "$out" "scripts/vm/tests/$name.sh" > "$LOGDIR/vm_$name.log" 2>&1
	rc=$?
	echo "vm/$name: $((SECONDS - t0)) s" >> "$LOGDIR/durations"
	record "vm/$name" $rc "$LOGDIR/vm_$name.log" \
		"$out/console.log"
}

# The README's first command, as a newcomer runs it: it must end with the
# side-by-side table, both modes in it with a throughput.
demo_test() {
	local log=$LOGDIR/demo.log rc=0

	bash scripts/demo.sh > "$log" 2>&1 || rc=$?
	if [ $rc = 0 ] && ! tr -d '\r' < "$log" | awk '
		$1 == "datagram" && $2 == 4092 && $3 + 0 > 0 { ud = 1 }
		$1 == "connected" && $2 == 65520 && $3 + 0 > 0 { rc = 1 }
		END { exit !(ud && rc) }'; then
		echo "FAIL: the demo's table lacks a mode or its throughput" >> "$log"
		rc=1
	fi
	record demo $rc "$log" "$TOPDIR/out/demo/console.log"
}

# Debian 12's stock kernel (scripts/stock-kernel.sh): the module built
# against its headers package, the kernel's own RDMA modules loaded by
# modprobe, then scenario NAME (scripts/vm/stock.sh); or, for stock_test
# dkms NAME..., the module installed in the guest by the admin guide's
# DKMS recipe and loaded by modprobe (scripts/vm/stock-dkms.sh).
stock_test() {
	local name=$1 sk log=$LOGDIR/stock_$1.log rc=0 secs=900
	local run=(scripts/vm/stock.sh "$1")

	# The guest compiles the module under TCG: minutes.
	[ "$1" != dkms ] || { run=(scripts/vm/stock-dkms.sh "${@:2}"); secs=2400; }
	{
		sk=$(bash scripts/stock-kernel.sh) &&
		bash scripts/build-module.sh "$sk/kdir" "$BUILD/stock-$name" &&
		bash scripts/vm-run.sh -k "$sk" -o "$LOGDIR/vm-stock-$name" \
			-t $secs -e IPOIB_CM_MODDIR="$BUILD/stock-$name" \
			-e IPOIB_CM_TOOLDIR="$BUILD/tools" -- "${run[@]}"
	} > "$log" 2>&1 || rc=$?
	record "stock/$name" $rc "$log" "$LOGDIR/vm-stock-$name/console.log"
}

# Another version's debug kernel (scripts/build-kernel.sh VERSION debug):
# scenario NAME through scripts/vm/on-kernel.sh, which allows for what an
# older rdma_rxe lacks (debug61-NAME for 6.1, debug72-NAME for 7.2).  The
# module and the test tools are built once per version, by the first of
# its jobs; the others wait for that build under a lock.
#
#   debug_test VERSION NAME
debug_test() {
	local ver=$1 name=$2 tag=debug${1//./} k rc=0 lock t0=$SECONDS
	local log=$LOGDIR/${tag}_$2.log b=$BUILD/$1-debug
	{
		k=$(flock "$CACHE/.$tag-lock" \
			bash scripts/build-kernel.sh "$ver" debug) &&
		mkdir -p "$BUILD" &&
		exec {lock}> "$BUILD/.$tag-build.lock" &&
		flock "$lock" &&
		{ [ -f "$b/.built" ] ||
		  { bash scripts/build-module.sh "$k" "$b/module" &&
		    bash scripts/build-tools.sh "$k" "$b/tools" &&
		    touch "$b/.built"; }; } &&
		exec {lock}>&- &&
		bash scripts/vm-run.sh -k "$k" -o "$LOGDIR/vm-$tag-$name" \
			-t "$(vm_timeout "scripts/vm/tests/$name.sh")" \
			-e IPOIB_CM_MODDIR="$b/module" \
			-e IPOIB_CM_TOOLDIR="$b/tools" -e IPOIB_CM_KDIR="$k" -- \
			scripts/vm/on-kernel.sh "$name"
	} > "$log" 2>&1 || rc=$?
	echo "$tag/$name: $((SECONDS - t0)) s" >> "$LOGDIR/durations"
	record "$tag/$name" $rc "$log" "$LOGDIR/vm-$tag-$name/console.log"
}

# Which debug kernel runs which scenario in the default run.  The full
# core scenarios (UD, connected mode with exact transfers, no SRQ, the
# RTR window, teardown and rmmod) run on 6.1, whose rdma_rxe has the
# quirks the driver works around (a failed UD send moves the UD QP to
# ERR; no Last WQE Reached); core, each of them cut down in one VM, on
# 7.2, where the APIs move; the other scenarios on 6.12.  Each runs
# once.  A scenario named on the command line runs on 6.12 (debug61-NAME
# and debug72-NAME pick the others).
ON_61="datagram rtr connected-teardown connected nosrq"
ON_72="core"

wanted() {
	[ $# = 1 ] || [[ " ${*:2} " = *" $1 "* ]]
}

# The jobs of the pool: the static checks, KUnit, every single-VM
# scenario the command line asks for.
pool=(static)
wanted kernel-cache "$@" && pool+=(kernel-cache)
if [ -n "$k612" ] && [ -f "$BUILD/6.12/ipoib_cm.ko" ]; then
	wanted accel "$@" && pool+=(accel)
	wanted klog-control "$@" && pool+=(klog-control)
	wanted demo "$@" && pool+=(demo)
	wanted kunit "$@" && pool+=(kunit)
	# Debian's kernel: the admin guide's DKMS recipe in the guest (its
	# compile under TCG took 756 s beside one other VM), then datagram
	# and core with the module it installed.  stock-datagram and
	# stock-rtr, named only, run datagram and rtr with the module built
	# on the host instead.
	wanted stock-dkms "$@" && pool+=(stock-dkms)
	for st in stock-datagram stock-rtr; do
		[[ " $* " != *" $st "* ]] || pool+=("$st")
	done
	for a in "$@"; do
		[[ $a != debug61-* && $a != debug72-* ]] || pool+=("$a")
	done
	for t in scripts/vm/tests/*.sh; do
		name=$(basename "$t" .sh)
		[ "$name" = kunit ] && continue
		if [ $# -gt 0 ]; then
			wanted "$name" "$@" && pool+=("$name")
		elif [[ " $ON_61 " == *" $name "* ]]; then
			pool+=("debug61-$name")
		elif [[ " $ON_72 " == *" $name "* ]]; then
			pool+=("debug72-$name")
		else
			pool+=("$name")
		fi
	done
else
	record vm 1 "$LOGDIR/build_6.12.log"
fi

report "$RESULTS"
RESULTS=$LOGDIR/results-end

# Longest first: the previous run's time of each job, and for a job this
# machine has not run yet (a cold run: every job) the time kept in
# scripts/test-durations (unknown to both: 100 s).  Without them a cold
# run could start its longest scenario last.
declare -A est=()
for durations in "$TOPDIR/scripts/test-durations" "$CACHE/test-durations"; do
	[ -f "$durations" ] || continue
	while read -r job secs; do
		est[$job]=$secs
	done < "$durations"
done
order=$(for job in "${pool[@]}"; do
		echo "${est[$job]:-100} $job"
	done | sort -rn | awk '{print $2}')

# Each guest has two CPUs (QEMU's TCG runs one host thread for each), but
# a guest's CPUs are seldom both busy: a 2-core host runs two jobs side by
# side.
VM_JOBS=${IPOIB_CM_VM_JOBS:-$(nproc)}
for job in $order; do
	while [ "$(jobs -rp | wc -l)" -ge "$VM_JOBS" ]; do
		wait -n
	done
	(
		t0=$SECONDS
		RESULTS=$LOGDIR/results-$job
		case $job in
		static) static_checks ;;
		kernel-cache) run_test host/kernel-cache \
			bash scripts/host-tests/kernel-cache.sh ;;
		accel) run_test host/accel \
			bash scripts/host-tests/accel.sh "$k612" ;;
		klog-control) run_test host/klog-control \
			bash scripts/host-tests/klog-control.sh "$k612" ;;
		demo) demo_test ;;
		kunit) vm_test kunit ;;
		stock-datagram) stock_test datagram ;;
		stock-dkms) stock_test dkms datagram core ;;
		stock-rtr) stock_test rtr ;;
		debug61-*) debug_test 6.1 "${job#debug61-}" ;;
		debug72-*) debug_test 7.2 "${job#debug72-}" ;;
		*) vm_test "$job" ;;
		esac
		echo "$job $((SECONDS - t0))" > "$LOGDIR/job-$job.time"
	) &
done
wait

report "$LOGDIR/results-static"

# KUnit: every case counts, as parsed by the kernel's own KTAP parser.
if [ -f "$LOGDIR/results-kunit" ]; then
	report "$LOGDIR/results-kunit"
	src612=$(bash scripts/debian-source.sh 6.12 2>/dev/null)
	for ktap in "$LOGDIR"/vm-kunit/kunit/*.ktap; do
		[ -f "$ktap" ] || continue
		suite=$(basename "$ktap" .ktap)
		python3 "$src612/tools/testing/kunit/kunit.py" parse "$ktap" \
			> "$LOGDIR/kunit-$suite.log" 2>&1
		summary=$(grep -o 'Ran [0-9]* tests:.*' "$LOGDIR/kunit-$suite.log")
		p=$(grep -o 'passed: [0-9]*' <<< "$summary" | grep -o '[0-9]*')
		n=$(grep -o 'Ran [0-9]*' <<< "$summary" | grep -o '[0-9]*')
		p=${p:-0}
		n=${n:-1}
		echo "     kunit $suite: $summary"
		passed=$((passed + p))
		failed=$((failed + n - p))
		[ "$p" = "$n" ] || show_tail "$LOGDIR/kunit-$suite.log" 40
	done
fi
for job in "${pool[@]}"; do
	[ "$job" = static ] || [ "$job" = kunit ] || report "$LOGDIR/results-$job"
done

# What this run took, for the next run's order.
mkdir -p "$CACHE"
for f in "$LOGDIR"/job-*.time; do
	[ -f "$f" ] || continue
	read -r job secs < "$f"
	est[$job]=$secs
done
for job in "${!est[@]}"; do
	echo "$job ${est[$job]}"
done | sort > "$CACHE/test-durations.new" &&
	mv "$CACHE/test-durations.new" "$CACHE/test-durations"

# Two-VM scenarios: the same script in both VMs (scripts/vm-pair.sh).
if [ -n "$k612" ] && [ -f "$BUILD/6.12/ipoib_cm.ko" ]; then
	for t in scripts/vm/pair-tests/*.sh; do
		name=$(basename "$t" .sh)
		wanted "$name" "$@" || continue
		out=$LOGDIR/vm-$name
		t0=$SECONDS
		bash scripts/vm-pair.sh -k "$k612" -o "$out" \
			-e IPOIB_CM_MODDIR="$BUILD/6.12" -- "$t" \
			> "$LOGDIR/vm-pair_$name.log" 2>&1
		rc=$?
		echo "vm-pair/$name: $((SECONDS - t0)) s" >> "$LOGDIR/durations"
		record "vm-pair/$name" $rc "$LOGDIR/vm-pair_$name.log" \
			"$out"/vm?.log "$out"/vm?/console.log
	done
fi

finish
