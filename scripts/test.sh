#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every test of the project, from a fresh Debian 12 machine:
#   - installs the packages it needs and builds the test kernels (cached);
#   - builds ipoib_cm.ko with W=1 against Linux 6.1 (Debian's headers),
#     6.12 and 7.2 (Debian's linux-source packages);
#   - checkpatch --strict and sparse on the sources;
#   - boots the debug kernel under QEMU and runs the KUnit suites and every
#     VM scenario in scripts/vm/tests/, each in a fresh VM whose kernel log
#     must stay clean.
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

result() {
	if [ "$2" = 0 ]; then
		echo "ok   $1"
		passed=$((passed + 1))
	else
		echo "FAIL $1${3:+ ($3)}"
		failed=$((failed + 1))
	fi
}

# run_test NAME COMMAND...: one test, its output in $LOGDIR/NAME.log.
run_test() {
	local name=$1 log t0=$SECONDS rc
	shift
	log=$LOGDIR/${name//\//_}.log
	"$@" > "$log" 2>&1
	rc=$?
	echo "$name: $((SECONDS - t0)) s" >> "$LOGDIR/durations"
	result "$name" $rc "see $log"
}

finish() {
	sort -t: -k2 -rn "$LOGDIR/durations" 2>/dev/null | head -n 8 |
		sed 's/^/     slowest: /'
	echo "test time: $((SECONDS - start)) s"
	echo "$passed passed, $failed failed"
	[ $failed = 0 ]
	exit
}

if ! bash scripts/install-deps.sh > "$LOGDIR/install-deps.log" 2>&1; then
	result install-deps 1 "see $LOGDIR/install-deps.log"
	finish
fi

# Kernels: 6.12 is built in full and boots the VM; 7.2 is configured and
# prepared for module builds; 6.1 is Debian 12's own headers package.
log "preparing kernels (cached in $CACHE)"
k612=$(bash scripts/build-kernel.sh 6.12 debug 2> "$LOGDIR/kernel-6.12.log")
result kernel/6.12-debug $? "see $LOGDIR/kernel-6.12.log"
k72=$(bash scripts/build-kernel.sh --prepare 7.2 debug 2> "$LOGDIR/kernel-7.2.log")
result kernel/7.2-prepare $? "see $LOGDIR/kernel-7.2.log"
k61=$(ls -d /usr/src/linux-headers-6.1.*-amd64 2>/dev/null | sort -V | tail -n1)
[ -n "$k61" ]
result kernel/6.1-headers $? "linux-headers-amd64 not installed"

BUILD=$TOPDIR/build
for v in 6.1:$k61 6.12:$k612 7.2:$k72; do
	ver=${v%%:*}
	kdir=${v#*:}
	if [ -z "$kdir" ]; then
		result "build/$ver" 1 "no kernel tree"
		continue
	fi
	run_test "build/$ver" bash scripts/build-module.sh "$kdir" "$BUILD/$ver"
done
# dkms add + dkms build, as an administrator would, in a private DKMS tree.
run_test dkms/6.1 bash scripts/dkms-build.sh "$k61"

# The verbs program the malformed-frames scenario sends with.
mkdir -p "$BUILD/tools"
run_test build/ud_inject gcc -O2 -Wall -Wextra -Werror \
	-o "$BUILD/tools/ud_inject" scripts/tools/ud_inject.c -libverbs

# Style and static checks.
src612=$(bash scripts/debian-source.sh 6.12 2>/dev/null)
for f in $(git ls-files '*.c' '*.h' 2>/dev/null || ls ./*.[ch] kunit/*.[ch]); do
	run_test "checkpatch/$f" perl "$src612/scripts/checkpatch.pl" \
		--strict --no-tree --quiet --show-types -f "$f"
done
# The admin guide covers every parameter, file, counter and tracepoint.
run_test docs bash scripts/check-docs.sh
if [ -n "$k612" ]; then
	run_test sparse/6.12 bash scripts/build-module.sh "$k612" \
		"$BUILD/sparse-6.12" C=2
fi

if [ -z "$k612" ] || [ ! -f "$BUILD/6.12/ipoib_cm.ko" ]; then
	result vm 1 "no 6.12 kernel or module to test"
	finish
fi

vm() {
	local out=$1
	shift
	bash scripts/vm-run.sh -k "$k612" -o "$out" \
		-e IPOIB_CM_MODDIR="$BUILD/6.12" \
		-e IPOIB_CM_TOOLDIR="$BUILD/tools" -e IPOIB_CM_KDIR="$k612" -- "$@"
}

# KUnit: every case counts, as parsed by the kernel's own KTAP parser.
if [ $# = 0 ] || [[ " $* " = *" kunit "* ]]; then
	kout=$LOGDIR/vm-kunit
	run_test vm/kunit vm "$kout" scripts/vm/tests/kunit.sh
	for ktap in "$kout"/kunit/*.ktap; do
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
	done
fi

# Single-VM scenarios, VM_JOBS at a time: each guest has one CPU, which
# QEMU's TCG runs on one host thread, so a 2-core host runs two side by
# side.  Results are reported in the scenarios' order.
VM_JOBS=${IPOIB_CM_VM_JOBS:-$(nproc)}
names=()
for t in scripts/vm/tests/*.sh; do
	name=$(basename "$t" .sh)
	[ "$name" = kunit ] && continue
	if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
		continue
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$VM_JOBS" ]; do
		wait -n
	done
	(
		t0=$SECONDS
		vm "$LOGDIR/vm-$name" "$t" > "$LOGDIR/vm_$name.log" 2>&1
		echo "$? $((SECONDS - t0))" > "$LOGDIR/vm_$name.rc"
	) &
	names+=("$name")
done
wait
for name in "${names[@]}"; do
	read -r rc secs < "$LOGDIR/vm_$name.rc" || { rc=1; secs=0; }
	echo "vm/$name: $secs s" >> "$LOGDIR/durations"
	result "vm/$name" "$rc" "see $LOGDIR/vm_$name.log"
done

# Two-VM scenarios: the same script in both VMs (scripts/vm-pair.sh).
for t in scripts/vm/pair-tests/*.sh; do
	name=$(basename "$t" .sh)
	if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
		continue
	fi
	run_test "vm-pair/$name" bash scripts/vm-pair.sh -k "$k612" \
		-o "$LOGDIR/vm-$name" -e IPOIB_CM_MODDIR="$BUILD/6.12" -- "$t"
done

finish
