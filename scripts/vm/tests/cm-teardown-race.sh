#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 900
# Teardown meeting a failure path at the worst moment, each forced from
# outside the driver (fail_function, and cm_hold holding a kernel
# function on one CPU); the cases are in scripts/vm/cm-faults-lib.sh:
#  - tx_map_case: a packet over RC whose DMA mapping fails, then a mode
#    switch that walks the send ring;
#  - accept_race_case: a failed accept whose REJ is held while the
#    reaper tears the connection down;
#  - stop_race_case: a stop that marks CLOSING a FAILED connection the
#    held reaper is tearing down.
# With the SRQ: the paths are the same without.  Then an exact transfer
# over RC and rmmod with nothing left; the runner fails on any kernel
# report.
. "$(dirname "$0")/../cm-faults-lib.sh"

fabric_single
load_module cm_srq=1
hosts_up
in0 ping -c 1 -W 10 192.0.2.2 > /dev/null || fail "no UD traffic before"
BASE0=$(rxe_objects rxe0)
BASE1=$(rxe_objects rxe1)
tx_map_case
accept_race_case
stop_race_case
connect_hosts
tcp_digest_check 4 || fail "a 4 MiB transfer arrived damaged or short"
cm_conns rxe0 | matches ' active live ' || fail "the transfer did not go over RC"
rxe_clean rxe0 rxe1
unload_checked
hosts_down
say "cm-teardown-race: ok"
