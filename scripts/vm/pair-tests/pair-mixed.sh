#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two VMs, datagram mode then connected mode with different options: role 0
# has the shared SRQ and sends over any connection to a peer
# (cm_bidirectional=1), role 1 has no SRQ (cm_srq=0) and the default
# one-connection-per-direction.  So
# role 0 answers over the QPs role 1 opened, which hold one receive until
# used: ping at 65000 octets and iperf3 both ways, over RC, no RNR failure.
# Role 0 serves two iperf3 runs (role 1 sends, then receives with -R).
. "$(dirname "$0")/../lib.sh"

fabric_pair
if [ "$ROLE" = 0 ]; then
	load_module cm_bidirectional=1
else
	load_module cm_srq=0
fi
pair_host_up
# Datagram mode first: the two VMs reach each other over UD.
wait_for 180 "the peer answering" ping -c 1 -W 2 "$PEER4"
ping -c 3 -i 0.3 "$PEER4" || fail "IPv4 ping to the peer (datagram)"
ping -6 -c 3 -i 0.3 "$PEER6" || fail "IPv6 ping to the peer (datagram)"
# Then connected mode, as an administrator switches it.  The peer's link
# address gains the RC flag (0x80) when it switches: relearn it until it
# shows, so neither end keeps sending to the datagram-mode address.
peer_connected() {
	ip neigh flush dev "$IB"
	ping -c 1 -W 2 "$PEER4" && ip neigh show "$PEER4" dev "$IB" | matches 'lladdr 80:'
}
switch_connected() {
	echo connected > "/sys/class/net/$IB/mode"
	[ "$(ip -o link show "$IB" | sed 's/.* mtu \([0-9]*\).*/\1/')" = 65520 ] ||
		fail "MTU is not 65520"
}
# Role 1 dials first, so that role 0 (bidirectional) answers over the QP
# role 1 opened, which is what this scenario is about.  Role 0 switches
# first and waits for role 1's connection; role 1 switches once it sees
# role 0's RC flag.  Until then role 0 knows role 1 only by its datagram
# address and cannot dial it; after, role 1 reaches role 0 only over RC.
peer_dialled() {
	cm_conns rxe0 | matches ' passive live '
}
if [ "$ROLE" = 0 ]; then
	switch_connected
	wait_for 180 "role 1's connection" peer_dialled
else
	wait_for 180 "the peer in connected mode" peer_connected
	switch_connected
fi
wait_for 180 "the peer in connected mode" peer_connected
# Role 1: wait until role 0 answers over the QP role 1 opened.
answers_on_ours() {
	ping -c 1 -W 2 "$PEER4" || true
	cm_conns rxe0 | awk '$3 == "active" && $9 > 0 { ok = 1 } END { exit !ok }'
}
if [ "$ROLE" = 1 ]; then
	wait_for 120 "role 0 answering over our QP" answers_on_ours
fi
ping -c 3 -i 0.3 -M do -s 65000 "$PEER4" || fail "ping -s 65000"
ping -6 -c 3 -i 0.3 -s 65000 "$PEER6" || fail "ping6 -s 65000"

if [ "$ROLE" = 0 ]; then
	timeout 300 iperf3 -s -1 > /dev/null || { cm_dump; fail "iperf3 server (1)"; }
	timeout 300 iperf3 -s -1 > /dev/null || { cm_dump; fail "iperf3 server (2)"; }
else
	# The peer's server may still be closing the previous test (it then
	# answers "busy" or refuses): try again, up to a minute.
	iperf_client() {
		local out=$1 i
		shift
		for i in $(seq 30); do
			timeout 200 iperf3 -c "$PEER4" -t 10 -J "$@" > "$out" || true
			cp "$out" "$VMOUT/"
			grep -q '"error"' "$out" || return 0
			grep -qE 'busy|refused' "$out" || break
			sleep 2
		done
		grep '"error"' "$out"
		return 1
	}
	iperf_client /tmp/up.json || { cm_dump; fail "iperf3 no-SRQ -> SRQ"; }
	iperf_client /tmp/down.json -R || { cm_dump; fail "iperf3 SRQ -> no-SRQ"; }
	# What was sent but not yet read at the end can only sit in the two
	# sockets (the VMs share these defaults).
	slack=$(($(sysctl -n net.ipv4.tcp_wmem | awk '{print $3}') +
		 $(sysctl -n net.ipv4.tcp_rmem | awk '{print $3}')))
	for f in up down; do
		python3 - /tmp/$f.json "$slack" <<'PY' || fail "iperf3 $f: byte counts differ"
import json, sys
e = json.load(open(sys.argv[1]))["end"]
sent, got = e["sum_sent"]["bytes"], e["sum_received"]["bytes"]
print(f"{sys.argv[1]}: sent {sent}, received {got}, "
      f"{e['sum_received']['bits_per_second'] / 1e6:.1f} Mbit/s")
sys.exit(0 if 0 < got <= sent and sent - got <= int(sys.argv[2]) else 1)
PY
	done
fi
cat "$(cm_debugfs rxe0)/connections"
[ "$(cm_stat rxe0 rc_tx_errors)" = 0 ] || fail "RC send errors"
if [ "$ROLE" = 1 ]; then
	[ "$(cm_stat rxe0 nosrq_rx_grown)" -gt 0 ] ||
		fail "the QPs role 1 opened never received"
fi
grep -qE "(per-QP|SRQ) receives" "$(cm_debugfs rxe0)/connections"
[ "$(cm_stat rxe0 rc_rx_bytes)" -gt 10000000 ] || fail "little came in over RC"
[ "$(cm_stat rxe0 rc_tx_bytes)" -gt 10000000 ] || fail "little went out over RC"
# Stay up until the peer is done.
sleep 15
unload_module
say "pair-mixed (role $ROLE): ok"
