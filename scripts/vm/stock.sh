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
# What 6.1's rdma_rxe lacks is taken into account by scripts/vm/on-kernel.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

modprobe -a veth ib_core ib_cm ib_uverbs rdma_rxe sch_prio cls_u32
echo "stock kernel $(uname -r): $(lsmod | awk 'NR > 1 { print $1 }' |
	grep -E '^(ib_|rdma_|veth)' | sort | tr '\n' ' ')"
exec "$(dirname "$0")/on-kernel.sh" "$1"
