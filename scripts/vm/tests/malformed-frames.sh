#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Hand-made UD frames from a verbs program on rxe0 to the interface on
# rxe1: short frames and unknown ethertypes are dropped and counted, and the
# interface keeps working.  (A bad GRH cannot be produced through rxe,
# which builds the network header itself: KUnit covers that case.)
. "$(dirname "$0")/../lib.sh"

INJECT=${IPOIB_CM_TOOLDIR:?}/ud_inject

fabric_single
load_module
hosts_up
in0 ping -c 1 -W 10 192.0.2.2 > /dev/null || fail "no traffic before"

# The destination's QPN and GID, from its link address.
read -r qpn gid < <(ip -n ns1 -j link show "$IB1" | python3 -S -c '
import ipaddress, json, sys
a = bytes.fromhex(json.load(sys.stdin)[0]["address"].replace(":", ""))
print(hex(int.from_bytes(a[1:4], "big")), ipaddress.IPv6Address(a[4:20]))')
qkey=$(cat /sys/module/ipoib_cm/parameters/roce_qkey)
say "target: $IB1 QPN $qpn GID $gid Q_Key $qkey"

rx_stat() {
	link_stat ns1 "$IB1" rx "$1"
}

len0=$(rx_stat length_errors)
drop0=$(rx_stat dropped)
"$INJECT" rxe0 "$qpn" "$gid" "$qkey" short 5 || fail "injecting short frames"
"$INJECT" rxe0 "$qpn" "$gid" "$qkey" ethertype 7 || fail "injecting ethertype"
"$INJECT" rxe0 "$qpn" "$gid" "$qkey" ipv4 3 || fail "injecting empty IPv4"
# The receiving NAPI may lag behind the tool under load: wait until all
# 12 are counted somewhere (or 30 s), then check where.
all_counted() {
	[ $(($(rx_stat length_errors) - len0 + $(rx_stat dropped) - drop0)) -ge 12 ]
}
wait_for 30 "the 12 frames to be counted" all_counted
len1=$(rx_stat length_errors)
drop1=$(rx_stat dropped)
say "length errors $len0 -> $len1, dropped $drop0 -> $drop1"
[ $((len1 - len0)) = 5 ] || fail "short frames not counted as length errors"
[ $((drop1 - drop0)) = 7 ] || fail "unknown ethertypes not counted as dropped"

in0 ping -c 2 -W 10 192.0.2.2 > /dev/null || fail "no traffic after"
unload_checked
say "malformed-frames: ok"
