#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the test tools the VM scenarios use, warnings as errors:
#
#   scripts/build-tools.sh KDIR OUTDIR [ud_inject] [cm_inject]
#
# ud_inject: a verbs program (OUTDIR/ud_inject).  cm_inject: a module for
# the kernel tree KDIR, built with W=1 (OUTDIR/cm_inject/cm_inject.ko).
# Without names, both.
set -euo pipefail

TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
kdir=${1:?usage: build-tools.sh KDIR OUTDIR [tool...]}
outdir=$(realpath -m "${2:?usage: build-tools.sh KDIR OUTDIR [tool...]}")
shift 2
[ $# -gt 0 ] || set -- ud_inject cm_inject

mkdir -p "$outdir"
for tool in "$@"; do
	case $tool in
	ud_inject)
		gcc -O2 -Wall -Wextra -Werror -o "$outdir/ud_inject" \
			"$TOPDIR/scripts/tools/ud_inject.c" -libverbs
		;;
	cm_inject)
		rm -rf "${outdir:?}/cm_inject"
		mkdir -p "$outdir/cm_inject"
		cp "$TOPDIR"/scripts/tools/cm_inject/{Kbuild,cm_inject.c} \
			"$outdir/cm_inject/"
		make -C "$kdir" M="$outdir/cm_inject" W=1 modules 2>&1 |
			tee "$outdir/cm_inject/build.log"
		! grep -q 'warning:' "$outdir/cm_inject/build.log"
		;;
	*)
		echo "build-tools.sh: no tool $tool" >&2
		exit 1
		;;
	esac
done
