#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the test tools the VM scenarios use, warnings as errors:
#
#   scripts/build-tools.sh KDIR OUTDIR [ud_inject] [cm_inject] [qp_err_fail]
#                                      [cm_hold] [rrlat]
#
# ud_inject: a verbs program (OUTDIR/ud_inject); rrlat: the benchmark's
# TCP latency probe (OUTDIR/rrlat), not built without its name.  cm_inject, qp_err_fail
# and cm_hold: modules for the kernel tree KDIR, built with W=1
# (OUTDIR/NAME/NAME.ko).  Without names, all four.
set -euo pipefail

TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
kdir=${1:?usage: build-tools.sh KDIR OUTDIR [tool...]}
outdir=$(realpath -m "${2:?usage: build-tools.sh KDIR OUTDIR [tool...]}")
shift 2
[ $# -gt 0 ] || set -- ud_inject cm_inject qp_err_fail cm_hold

mkdir -p "$outdir"
for tool in "$@"; do
	case $tool in
	ud_inject)
		gcc -O2 -Wall -Wextra -Werror -o "$outdir/ud_inject" \
			"$TOPDIR/scripts/tools/ud_inject.c" -libverbs
		;;
	rrlat)
		gcc -O2 -Wall -Wextra -Werror -o "$outdir/rrlat" \
			"$TOPDIR/scripts/tools/rrlat.c"
		;;
	cm_inject | qp_err_fail | cm_hold)
		rm -rf "${outdir:?}/$tool"
		mkdir -p "$outdir/$tool"
		cp "$TOPDIR"/scripts/tools/"$tool"/{Kbuild,"$tool".c} \
			"$outdir/$tool/"
		make -C "$kdir" M="$outdir/$tool" W=1 modules 2>&1 |
			tee "$outdir/$tool/build.log"
		if grep -q 'warning:' "$outdir/$tool/build.log"; then
			exit 1
		fi
		;;
	*)
		echo "build-tools.sh: no tool $tool" >&2
		exit 1
		;;
	esac
done
