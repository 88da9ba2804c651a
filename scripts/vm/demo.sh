#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM for `make demo`: datagram mode over Soft-RoCE.
. "$(dirname "$0")/lib.sh"

say "== Soft-RoCE fabric: rxe0 and rxe1 on a veth pair (MTU 9000)"
fabric_single
rdma link show
say "== loading ipoib_cm: one interface per RoCE port"
load_module
dmesg | grep ipoib_cm
hosts_up
in0 ip -d link show "$IB0"
in0 ip addr show dev "$IB0"
say "== ping and ping6 from ns0 ($IB0) to ns1 ($IB1), first packets included"
in0 ping -c 3 192.0.2.2
in0 ping -6 -c 3 2001:db8::2
in0 ip neigh show dev "$IB0"
say "== the largest datagram-mode payload (MTU 4092)"
in0 ping -c 2 -M do -s 4064 192.0.2.2
say "== iperf3, 10 s, datagram mode"
in1 iperf3 -s -1 > /dev/null &
sleep 1
in0 iperf3 -c 192.0.2.2 -t 10
wait
in0 ip -s link show "$IB0"
say "== unloading"
unload_module
dmesg | tail -n 4
