#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build ipoib_cm.ko (and the KUnit module where the kernel has KUnit)
# against one kernel tree, out of the source directory, with W=1.
#
#   scripts/build-module.sh KDIR OUTDIR [make arguments...]
#
# Fails if the compiler (or sparse, with C=2) prints any warning.  The
# build log is OUTDIR/build.log.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=${1:?usage: build-module.sh KDIR OUTDIR [make args]}
outdir=$(realpath -m "${2:?usage: build-module.sh KDIR OUTDIR [make args]}")
shift 2

# Out-of-tree builds write their objects next to the sources: build from a
# private copy so several kernels can be built from one checkout.
rm -rf "$outdir"
mkdir -p "$outdir/kunit"
cp "$TOPDIR"/Kbuild "$TOPDIR"/Makefile "$TOPDIR"/*.[ch] "$outdir/"
cp "$TOPDIR"/kunit/Kbuild "$TOPDIR"/kunit/*.[ch] "$outdir/kunit/"

kunit=()
if grep -qE '^CONFIG_KUNIT=(y|m)' "$kdir/.config"; then
	kunit=(IPOIB_CM_KUNIT=m)
fi

status=0
make -C "$kdir" M="$outdir" W=1 "${kunit[@]}" "$@" modules \
	> "$outdir/build.log" 2>&1 || status=$?

# modpost cannot check symbols against a tree that only ran
# modules_prepare; that notice is not a warning about our code.
if grep -E 'warning:|error:|WARNING:' "$outdir/build.log" |
   grep -vE 'Module\.symvers is missing|modpost: "[a-z_0-9]+" \[.*\] undefined!'; then
	status=1
fi
if [ $status != 0 ]; then
	tail -n 30 "$outdir/build.log" >&2
	exit 1
fi
exit 0
