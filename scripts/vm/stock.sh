#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a scenario in Debian 12's stock kernel (vm-run.sh -k on a directory
# of scripts/stock-kernel.sh):
#
#   scripts/vm/stock.sh SCENARIO        (scripts/vm/tests/SCENARIO.sh)
#
# There, ib_core, ib_cm, rdma_rxe, veth, and the qdisc and filter of the
# wire faults, are modules, which the project's own kernel has built in:
# they are loaded first, by modprobe, from the kernel's own modules (the
# initramfs laid them over /lib/modules), as an administrator's system
# would.
#
# rdma_rxe raises Last WQE Reached only from Linux 6.5 on (c3e1bf626eb3):
# on 6.1 every SRQ teardown has to go on without it, and the driver says
# so once per interface.  That notice is then expected by the log check,
# and required once connected mode with the SRQ has closed a connection:
# it shows the fallback ran, and the log check shows it left nothing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

modprobe -a veth ib_core ib_cm ib_uverbs rdma_rxe sch_prio cls_u32
echo "stock kernel $(uname -r): $(lsmod | awk 'NR > 1 { print $1 }' |
	grep -E '^(ib_|rdma_|veth)' | sort | tr '\n' ' ')"
no_last_wqe=0
case $(uname -r) in
6.1.* | 6.[234].*)
	no_last_wqe=1
	: > "$VMOUT/expect-no-last-wqe"
	;;
esac
"$(dirname "$0")/tests/$1.sh"
if [ $no_last_wqe = 1 ] &&
   dmesg | matches 'connected mode: SRQ receives' &&
   [ "$(dmesg | grep -c 'connected mode stopped: [1-9]')" -gt 0 ]; then
	n=$(dmesg | grep -c 'no Last WQE Reached event in' || true)
	say "SRQ teardowns without Last WQE Reached on $(uname -r): $n notices"
	[ "$n" -ge 1 ] || fail "no SRQ teardown went without Last WQE Reached on $(uname -r)"
fi
