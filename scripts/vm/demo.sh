#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM for `make demo`: datagram and connected mode side by
# side over Soft-RoCE.
. "$(dirname "$0")/lib.sh"

# iperf3 for 10 s from ns0 to ns1; prints the receiver's Mbit/s.
throughput() {
	in1 iperf3 -s -1 > /dev/null 2>&1 &
	wait_listening ns1 5201
	in0 iperf3 -c 192.0.2.2 -t 10 -J > /tmp/demo-iperf.json
	wait
	python3 -S -c 'import json, sys
end = json.load(open(sys.argv[1]))["end"]
print("%.1f" % (end["sum_received"]["bits_per_second"] / 1e6))' /tmp/demo-iperf.json
}

say "== Soft-RoCE fabric: rxe0 and rxe1 on a veth pair (MTU 9000)"
fabric_single
rdma link show
say "== loading ipoib_cm: one interface per RoCE port"
load_module
dmesg | grep ipoib_cm
hosts_up
in0 ip -d link show "$IB0"

say "== datagram mode (MTU $(link_mtu ns0 "$IB0")): ping, ping6, largest payload"
in0 ping -c 3 192.0.2.2
in0 ping -6 -c 3 2001:db8::2
in0 ping -c 2 -M do -s 4064 192.0.2.2
say "== datagram mode: iperf3, 10 s"
ud=$(throughput)

say "== echo connected > /sys/class/net/ibX/mode, on both ends"
set_mode ns0 "$IB0" connected
set_mode ns1 "$IB1" connected
in0 ip neigh flush dev "$IB0"
in1 ip neigh flush dev "$IB1"
in0 ip link show "$IB0"
say "== connected mode (MTU $(link_mtu ns0 "$IB0")): ping, ping6 at 65000 octets"
in0 ping -c 3 192.0.2.2
in0 ping -c 3 -M do -s 65000 192.0.2.2
in0 ping -6 -c 3 -s 65000 2001:db8::2
say "== connected mode: iperf3, 10 s"
rc=$(throughput)
cat "$(cm_debugfs rxe0)/connections"

say "== side by side"
printf '%-16s %8s %14s\n' mode MTU "iperf3 Mbit/s"
printf '%-16s %8s %14s\n' datagram 4092 "$ud"
printf '%-16s %8s %14s\n' connected 65520 "$rc"
say "== unloading"
unload_module
dmesg | tail -n 4
