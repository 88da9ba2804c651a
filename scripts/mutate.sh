#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The mutation check: break one behaviour on purpose and see the test that
# claims it fail.
#
#   scripts/mutate.sh [NAME...]     (default: every scripts/mutations/*.patch)
#
# Each scripts/mutations/NAME.patch is a change to the driver whose
# preamble names, on a line "Test: SCENARIO", the VM scenario
# (scripts/vm/tests/SCENARIO.sh) that must fail with it.  The patch is
# applied to a throwaway copy of the committed tree (git worktree), the
# module is built for the 6.12 debug kernel, and the scenario runs on it.
# A mutation that builds and passes is "NOT CAUGHT": the suite has a hole.
# Results go to build/mutants/results; the exit status is 1 if any
# mutation was not caught or did not apply or build.
set -uo pipefail

TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOPDIR"
OUT=$TOPDIR/build/mutants
mkdir -p "$OUT"
k612=$(bash scripts/build-kernel.sh 6.12 debug) || exit 1

names=("$@")
if [ ${#names[@]} = 0 ]; then
	for p in scripts/mutations/*.patch; do
		names+=("$(basename "$p" .patch)")
	done
fi

status=0
: > "$OUT/results"
for name in "${names[@]}"; do
	patch=$TOPDIR/scripts/mutations/$name.patch
	test=$(sed -n 's/^Test: *//p' "$patch" | sed -n 1p)
	tree=$OUT/$name
	result=
	git worktree remove --force "$tree" 2>/dev/null
	rm -rf "$tree"
	if ! git worktree add -q --detach "$tree" HEAD ||
	   ! git -C "$tree" apply "$patch"; then
		result="does not apply"
	elif ! bash "$tree/scripts/build-module.sh" "$k612" \
		"$tree/build/6.12" > "$OUT/$name.build.log" 2>&1; then
		result="does not build"
	elif ! bash "$tree/scripts/build-tools.sh" "$k612" "$tree/build/tools" \
		>> "$OUT/$name.build.log" 2>&1; then
		result="tools do not build"
	else
		# The scenario's own timeout, as the test command gives it.
		secs=$(sed -n 's/^# vm-timeout: *\([0-9]*\)$/\1/p' \
			"scripts/vm/tests/$test.sh" | sed -n 1p)
		if (cd "$tree" && bash scripts/vm-run.sh -k "$k612" \
			-o "$OUT/$name.vm" -t "${secs:-900}" \
			-e IPOIB_CM_MODDIR="$tree/build/6.12" \
			-e IPOIB_CM_TOOLDIR="$tree/build/tools" \
			-e IPOIB_CM_KDIR="$k612" -- \
			"scripts/vm/tests/$test.sh") > "$OUT/$name.log" 2>&1; then
			result="NOT CAUGHT by vm/$test"
		else
			result="caught by vm/$test: $(grep -ahE 'FAIL|kernel log finding' \
				"$OUT/$name.vm/console.log" "$OUT/$name.log" |
				sed -n 1p | cut -c1-160)"
		fi
	fi
	case $result in caught*) ;; *) status=1 ;; esac
	echo "$name: $result" | tee -a "$OUT/results"
	git worktree remove --force "$tree" 2>/dev/null
done
exit $status
