#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job, from a fresh Debian 12 machine: install what is needed,
# build the test kernel and the module, boot the VM over Soft-RoCE and show
# ipoib_cm at work (scripts/vm/demo.sh runs inside the VM).

set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$TOPDIR"

bash scripts/install-deps.sh
log "building the test kernel (cached in $CACHE; the first build takes 15-25 minutes)"
kdir=$(bash scripts/build-kernel.sh 6.12 debug)
# Its own build directory: `make check` runs this script beside VMs that
# use build/6.12.
bash scripts/build-module.sh "$kdir" "$TOPDIR/build/demo"
log "booting the VM (software emulation: give it a minute or two)"
bash scripts/vm-run.sh -v -k "$kdir" -o "$TOPDIR/out/demo" \
	-e IPOIB_CM_MODDIR="$TOPDIR/build/demo" -- scripts/vm/demo.sh
