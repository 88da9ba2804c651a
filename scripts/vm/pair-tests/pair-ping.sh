#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two VMs, one rxe each over a QEMU socket network: datagram-mode ping and
# ping6 between them.  Both ends wait for each other, then for the other's
# last ping, so neither unloads while the other still needs it.
. "$(dirname "$0")/../lib.sh"

fabric_pair
load_module
pair_host_up
wait_for 180 "the peer answering" ping -c 1 -W 2 "$PEER4"
ping -c 3 -i 0.3 "$PEER4" || fail "IPv4 ping to the peer"
ping -6 -c 3 -i 0.3 "$PEER6" || fail "IPv6 ping to the peer"
# Stay up until the peer has finished its own pings.
sleep 20
unload_module
say "pair-ping (role $ROLE): ok"
