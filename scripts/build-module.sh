#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build ipoib_cm.ko (and the KUnit module where the kernel has KUnit)
# against one kernel tree, out of the source directory, with W=1.
#
#   scripts/build-module.sh [--in-place] KDIR OUTDIR [make arguments...]
#
# Fails if the compiler (or sparse, with C=2) prints any warning.  The
# build log is OUTDIR/build.log.  --in-place builds again in an OUTDIR an
# earlier run filled, reusing its objects (sparse with C=2 still checks
# every source), and logs to OUTDIR/build-again.log.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

in_place=0
if [ "${1:-}" = --in-place ]; then
	in_place=1
	shift
fi
kdir=${1:?usage: build-module.sh KDIR OUTDIR [make args]}
outdir=$(realpath -m "${2:?usage: build-module.sh KDIR OUTDIR [make args]}")
shift 2

# Out-of-tree builds write their objects next to the sources: build from a
# private copy so several kernels can be built from one checkout.
buildlog=$outdir/build.log
if [ $in_place = 1 ]; then
	[ -f "$outdir/Kbuild" ] || die "nothing built in $outdir yet"
	buildlog=$outdir/build-again.log
else
	rm -rf "$outdir"
	mkdir -p "$outdir/kunit"
	cp "$TOPDIR"/Kbuild "$TOPDIR"/Makefile "$TOPDIR"/*.[ch] "$outdir/"
	cp "$TOPDIR"/kunit/Kbuild "$TOPDIR"/kunit/*.[ch] "$outdir/kunit/"
fi

args=(W=1)
if grep -qE '^CONFIG_KUNIT=(y|m)' "$kdir/.config"; then
	args+=(IPOIB_CM_KUNIT=m)
fi
# A tree that only ran modules_prepare has no symbol table: modpost cannot
# resolve anything there, so its complaints say nothing about our code.
prepared_only=0
if [ ! -f "$kdir/Module.symvers" ]; then
	prepared_only=1
	args+=(KBUILD_MODPOST_WARN=1)
fi

status=0
make -C "$kdir" M="$outdir" "${args[@]}" "$@" modules \
	> "$buildlog" 2>&1 || status=$?

findings=$(grep -E 'warning:|error:|WARNING:|ERROR:' "$buildlog" || true)
if [ $prepared_only = 1 ]; then
	findings=$(grep -vE 'modpost|Module\.symvers' <<< "$findings" || true)
fi
if [ -n "$findings" ]; then
	echo "$findings" >&2
	status=1
fi
if [ $status != 0 ]; then
	tail -n 30 "$buildlog" >&2
	exit 1
fi
exit 0
