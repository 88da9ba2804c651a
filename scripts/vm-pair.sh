#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The two-VM fixture: boot two test VMs joined by a QEMU socket network on
# loopback (each sees one virtio-net NIC, eth0) and run the same script in
# both, with VM_ROLE=0 in one and VM_ROLE=1 in the other.  Each VM is
# checked like any other (exit status, kernel log, kmemleak).
#
#   scripts/vm-pair.sh [-k KDIR] [-o OUTDIR] [-t SECONDS] [-e VAR=VALUE]...
#                      -- command [args]
#
# Needed wherever the two ends run the module with different parameters.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

args=()
outdir=""
while getopts "k:o:t:e:" opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	k|t|e) args+=("-$opt" "$OPTARG") ;;
	*) die "usage: vm-pair.sh [-k kdir] [-o outdir] [-t secs] [-e v=x] -- cmd" ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || die "no command given"
[ -n "$outdir" ] || outdir=$(mktemp -d /tmp/ipoib_cm-pair.XXXXXX)
mkdir -p "$outdir"

# A free TCP port on loopback for the socket network.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nic="-device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:5"

IPOIB_CM_QEMU_EXTRA="-netdev socket,id=n0,listen=127.0.0.1:$port ${nic}0" \
	bash "$TOPDIR/scripts/vm-run.sh" "${args[@]}" -o "$outdir/vm0" \
	-e VM_ROLE=0 -- "$@" > "$outdir/vm0.log" 2>&1 &
pid0=$!
sleep 2
IPOIB_CM_QEMU_EXTRA="-netdev socket,id=n0,connect=127.0.0.1:$port ${nic}1" \
	bash "$TOPDIR/scripts/vm-run.sh" "${args[@]}" -o "$outdir/vm1" \
	-e VM_ROLE=1 -- "$@" > "$outdir/vm1.log" 2>&1 &
pid1=$!

rc=0
wait $pid0 || { log "VM 0 failed: see $outdir/vm0"; rc=1; }
wait $pid1 || { log "VM 1 failed: see $outdir/vm1"; rc=1; }
exit $rc
