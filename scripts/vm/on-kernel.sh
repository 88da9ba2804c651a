#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a scenario on whatever kernel the VM booted, with what that
# kernel's rdma_rxe is known to lack taken into account:
#
#   scripts/vm/on-kernel.sh SCENARIO    (scripts/vm/tests/SCENARIO.sh)
#
# rdma_rxe raises Last WQE Reached only from Linux 6.5 on (c3e1bf626eb3):
# before, every SRQ teardown has to go on without it, and the driver says
# so once per interface.  That notice is then expected by the log check,
# and required once connected mode with the SRQ has closed a connection:
# it shows the fallback ran, and the log check shows it left nothing.
# Used by scripts/vm/stock.sh (Debian 12's kernel) and directly on the
# project's 6.1 debug kernel.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

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
