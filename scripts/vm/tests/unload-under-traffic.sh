#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rmmod while iperf3 runs both ways (once each interface has received
# another megabyte): it finishes, cleanly, within a minute.
# The minute is rmmod's own (unload_module's RMMOD_SECS), not the checks
# around it: with iperf3 saturating both emulated CPUs, starting each
# process of those checks takes seconds.
. "$(dirname "$0")/../lib.sh"

fabric_single
load_module
hosts_up
in1 iperf3 -s > /dev/null 2>&1 &
spid=$!
wait_listening ns1 5201
in0 iperf3 -c 192.0.2.2 -t 120 --bidir > /dev/null 2>&1 &
cpid=$!
# Until data flows both ways (counted by both interfaces).
wait_rx 60 1000000 "ns0:$IB0" "ns1:$IB1"
start=$SECONDS
unload_checked
say "rmmod under traffic: ${RMMOD_SECS}s, with the checks $((SECONDS - start))s"
[ "$RMMOD_SECS" -le 60 ] || fail "rmmod took ${RMMOD_SECS}s"
kill $cpid $spid 2>/dev/null || true
wait $cpid $spid 2>/dev/null || true
say "unload-under-traffic: ok"
