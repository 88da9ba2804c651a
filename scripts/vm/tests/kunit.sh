#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the KUnit suites and save their KTAP results for the host's parser.
. "$(dirname "$0")/../lib.sh"

insmod "$MODDIR/kunit/ipoib_cm_kunit.ko"
mkdir -p "$VMOUT/kunit"
found=0
for d in /sys/kernel/debug/kunit/ipoib_cm_*; do
	[ -d "$d" ] || continue
	cp "$d/results" "$VMOUT/kunit/$(basename "$d").ktap"
	found=1
done
rmmod ipoib_cm_kunit
[ $found = 1 ] || fail "no ipoib_cm KUnit suite ran"
say "kunit: results saved"
# The host parses them for its report; the scenario fails on its own
# too, so that a mutation run (which reads only its status) sees it.
if grep -h 'not ok' "$VMOUT"/kunit/*.ktap; then
	fail "a KUnit case failed"
fi
