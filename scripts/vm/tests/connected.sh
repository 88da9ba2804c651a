#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Connected mode (RFC 4755) over rxe with the shared SRQ: the mode file,
# MTU 65520, ping and ping6 at 65000 octets, iperf3 and a checked TCP
# transfer over RC (counters prove it), then one end back in datagram
# mode: traffic still flows, over UD, and a packet too big for UD gets a
# local ICMP error carrying 4092.
. "$(dirname "$0")/../lib.sh"

fabric_single
# For the QP error below.
wire_refusing_root veth0
load_module
hosts_up

[ "$(get_mode ns0 "$IB0")" = datagram ] || fail "new interfaces are not in datagram mode"
set_mode ns0 "$IB0" connected || fail "echo connected > mode (ns0)"
set_mode ns1 "$IB1" connected || fail "echo connected > mode (ns1)"
[ "$(get_mode ns0 "$IB0")" = connected ] || fail "mode does not read back"
for i in 0 1; do
	ifname=$([ $i = 0 ] && echo "$IB0" || echo "$IB1")
	mtu=$(link_mtu ns$i "$ifname")
	[ "$mtu" = 65520 ] || fail "$ifname: MTU $mtu in connected mode, expected 65520"
done
before=$(klog_count 'mode must be "datagram" or "connected"')
if set_mode ns0 "$IB0" bogus 2>/dev/null; then
	fail "mode accepted \"bogus\""
fi
[ "$(klog_count 'mode must be "datagram" or "connected"')" -gt "$before" ] ||
	fail "no kernel message for a bad mode"
ip -n ns0 link set "$IB0" mtu 65521 2>/dev/null && fail "MTU 65521 accepted"

# The peer's link address carries the RC flag now.
in0 ping -c 1 -W 10 192.0.2.2 || fail "first ping in connected mode"
in0 ip neigh show 192.0.2.2 dev "$IB0" | matches 'lladdr 80:' ||
	fail "the peer's address has no RC flag: $(in0 ip neigh show dev "$IB0")"
in0 ping -c 3 -i 0.3 -M do -s 65000 192.0.2.2 || fail "ping -s 65000"
in0 ping -6 -c 3 -i 0.3 -s 65000 2001:db8::2 || fail "ping6 -s 65000"
cat "$(cm_debugfs rxe0)/connections"
cm_conns rxe0 | matches ' active live ' || fail "no live connection opened by $IB0"
cm_conns rxe1 | matches ' passive live ' || fail "no live connection accepted by $IB1"

rc0=$(cm_stat rxe0 rc_tx_bytes)
ud0=$(link_stat ns0 "$IB0" tx bytes)
iperf_check 10 || fail "iperf3 byte counts differ"
rc0=$(($(cm_stat rxe0 rc_tx_bytes) - rc0))
all0=$(($(link_stat ns0 "$IB0" tx bytes) - ud0))
got=$(python3 -S -c 'import json; print(json.load(open("/tmp/iperf-server.json"))["end"]["sum_received"]["bytes"])')
say "iperf3 delivered $got bytes; $IB0 sent $all0 bytes, $rc0 of them over RC"
[ "$rc0" -ge "$got" ] || fail "less went over RC ($rc0) than iperf3 delivered ($got)"
[ $((all0 - rc0)) -lt $((got / 100)) ] || fail "$((all0 - rc0)) bytes went over UD"
tcp_digest_check 8 || fail "an 8 MiB TCP transfer arrived damaged or short"
cat "$(cm_debugfs rxe0)/connections" "$(cm_debugfs rxe1)/connections"
[ "$(cm_stat rxe0 rc_tx_errors)" = 0 ] || fail "RC send errors"
rxe_clean rxe0 rxe1
# Both ends opened and accepted (ping both ways): every connection's QP,
# opened or accepted, is on its interface's SRQ.
in1 ping -c 2 -i 0.3 -W 10 192.0.2.1 > /dev/null || fail "ping 1 -> 0"
[ "$(cm_conns rxe1 | grep -c ' active live ')" -ge 1 ] || fail "$IB1 opened no connection"
srq_check rxe0 srq || fail "an RC QP of $IB0 is not on its SRQ"
srq_check rxe1 srq || fail "an RC QP of $IB1 is not on its SRQ"

# rxe moves an RC QP to ERR when the network stack refuses one of its
# packets (a queue that drops on enqueue), and then reports every send of
# it as flushed, with no QP event: the connection must be seen dead,
# closed and dialled again, not left live to swallow what is sent on it.
# A band that holds nothing (pfifo limit 0) takes $IB0's RC SEND packets
# (UDP 4791, BTH opcode 0x00-0x07) for one ping.  Older rxe (6.1's)
# resends a refused packet instead, again and again while the band is
# there (send_err rises by thousands a second with nothing more sent;
# a new QP's packet, refused once, counts one): there the QP stays in
# RTS, and the same connection must carry traffic once the band is gone.
qpn=$(conn_col rxe0 active live 5)
tx=$(conn_col rxe0 active live 7)
up=$(cm_stat rxe0 conn_active_up)
serr=$(rxe_stat rxe0 send_err)
wire_refuse veth0 0x00 0xf8
in0 ping -c 1 -W 2 192.0.2.2 > /dev/null || true
serr1=$(rxe_stat rxe0 send_err)
sleep 1
serr2=$(rxe_stat rxe0 send_err)
wire_clear veth0
say "RC send refused by the wire: rxe0 send_err $serr -> $serr1, a second later $serr2"
[ "$serr1" -gt "$serr" ] ||
	fail "precondition: rxe did not see its RC send refused"
if [ "$serr2" -ge $((serr1 + 100)) ]; then
	say "this rxe resends what the wire refused: QP $qpn must stay in use"
	wait_for 30 "the connection of QP $qpn carrying traffic again" sh -c \
		"ip netns exec ns0 ping -c 1 -W 1 192.0.2.2 > /dev/null &&
		 [ \"\$(grep ' active live $qpn ' $(cm_debugfs rxe0)/connections |
		      awk '{ print \$7 }')\" -gt $tx ]"
	tcp_digest_check 4 || fail "a TCP transfer after the refused sends"
	[ "$(conn_col rxe0 active live 5)" = "$qpn" ] ||
		fail "QP $qpn was replaced although rxe kept it in RTS"
else
	# Traffic dials the new connection; the old QP must be gone.
	wait_for 30 "the connection whose QP rxe moved to ERR replaced" sh -c \
		"ip netns exec ns0 ping -c 1 -W 1 192.0.2.2;
		 grep -q ' active live ' $(cm_debugfs rxe0)/connections &&
		 ! grep -q ' $qpn ' $(cm_debugfs rxe0)/connections"
	tcp_digest_check 4 || fail "a TCP transfer after the QP error"
	say "QP $qpn replaced by $(conn_col rxe0 active live 5), dialled $(($(cm_stat rxe0 conn_active_up) - up)) more times"
fi
rxe_clean rxe0 rxe1

# One end back in datagram mode: its MTU drops and the connections close.
set_mode ns1 "$IB1" datagram || fail "echo datagram > mode"
[ "$(link_mtu ns1 "$IB1")" = 4092 ] || fail "datagram MTU is $(link_mtu ns1 "$IB1")"
wait_for 20 "connections closed" sh -c "! grep -q live $(cm_debugfs rxe0)/connections"
in0 ip neigh flush dev "$IB0"
in1 ip neigh flush dev "$IB1"
rc0=$(cm_stat rxe0 rc_tx_packets)
in0 ping -c 3 -i 0.3 192.0.2.2 || fail "ping connected -> datagram"
in1 ping -c 3 -i 0.3 192.0.2.1 || fail "ping datagram -> connected"
in0 ping -c 2 -s 8000 192.0.2.2 || fail "fragmented ping connected -> datagram"
if in0 ping -c 1 -W 3 -M do -s 5000 192.0.2.2 > /tmp/big.out 2>&1; then
	fail "5000 octets with DF reached a datagram-mode peer"
fi
cat /tmp/big.out
grep -q 'mtu = 4092\|mtu=4092' /tmp/big.out || fail "no ICMP error with MTU 4092"
iperf_check 10 || fail "iperf3 connected -> datagram"
[ "$(cm_stat rxe0 rc_tx_packets)" = "$rc0" ] || fail "RC used towards a datagram-mode peer"
[ "$(cm_stat rxe0 too_big_icmp)" -gt 0 ] || [ "$(awk '$1 == "drop_too_big" {print $2}' "$(cm_debugfs rxe0)/stats")" -gt 0 ] ||
	fail "no packet counted as too big"

unload_checked
say "connected: ok"
