#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Datagram mode end to end over rxe: ARP and ND, ping and ping6, the
# largest UD payload, multicast, iperf3, the carrier, a UD QP the provider
# moved to ERR (a packet the wire refused; a send with no route to the
# peer), device removal under traffic.
. "$(dirname "$0")/../lib.sh"

fabric_single
# For the UD QP error below.
wire_refusing_root veth1
load_module
hosts_up

mtu=$(link_mtu ns0 "$IB0")
[ "$mtu" = 4092 ] || fail "UD MTU is $mtu, expected 4092"

# The very first packet needs ARP / ND first: it must still get through.
in0 ping -c 1 -W 10 192.0.2.2 || fail "first IPv4 ping"
in0 ping -c 3 -i 0.3 192.0.2.2 || fail "IPv4 ping"
in0 ping -6 -c 1 -W 10 2001:db8::2 || fail "first IPv6 ping"
in0 ping -6 -c 3 -i 0.3 2001:db8::2 || fail "IPv6 ping"
in0 ip neigh show dev "$IB0" | matches 'lladdr' || fail "no neighbour entry"

# Largest UD payload: 4092 - 20 (IPv4) - 8 (ICMP).
in0 ping -c 2 -M do -s 4064 192.0.2.2 || fail "ping at the largest UD payload"
if in0 ping -c 1 -W 2 -M do -s 4065 192.0.2.2 2>/tmp/err; then
	fail "a ping over the MTU with DF went through"
fi
grep -qi 'too long\|mtu' /tmp/err || fail "no local MTU error: $(cat /tmp/err)"
in0 ping -c 2 -s 8000 192.0.2.2 || fail "fragmented ping"
in0 ping -6 -c 2 -s 4044 2001:db8::2 || fail "ping6 at the largest UD payload"

# Multicast: all-hosts and all-nodes answer, and a UDP group receiver.
out=$(in0 ping -c 2 -W 5 -I "$IB0" 224.0.0.1 || true)
grep -q 'from 192.0.2.2' <<< "$out" || fail "no answer from 224.0.0.1: $out"
peer_ll=$(ip -n ns1 -6 -o addr show dev "$IB1" scope link |
	  sed 's/.*inet6 \(fe80[^/]*\).*/\1/')
out=$(in0 ping -6 -c 2 -W 5 "ff02::1%$IB0" || true)
grep -q "from $peer_ll" <<< "$out" ||
	fail "no answer from $peer_ll to ff02::1: $out"
rm -f /tmp/mcast.ready
in1 python3 -S - "$IB1" <<'PY' > /tmp/mcast.out &
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("239.1.2.3", 5000))
mreq = struct.pack("4s4s", socket.inet_aton("239.1.2.3"),
                   socket.inet_aton("192.0.2.2"))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
s.settimeout(20)
open("/tmp/mcast.ready", "w").close()
print(s.recvfrom(100)[0].decode())
PY
rpid=$!
# The receiver is a member before anything is sent (an interpreter can
# take seconds to start under TCG); then the interface joins the group,
# in its own task: on RoCE it attaches the QP and then joins the group's
# MGID at the IPv6 level on the Ethernet device under the port, which
# shows in veth1's list (IPv4 239.1.2.3: MGID ff1S:401b:PKEY::f01:203).
group_joined() {
	ip -6 maddr show dev veth1 | matches -E 'inet6 ff1[0-9a-f]:401b:[0-9a-f:]*:f01:203( |$)'
}
wait_for 60 "the multicast receiver" test -e /tmp/mcast.ready
wait_explain 30 "$IB1 to join 239.1.2.3" \
	'ip -n ns1 maddr show dev "$IB1"; ip -6 maddr show dev veth1' group_joined
in0 python3 -S - <<'PY'
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF,
             socket.inet_aton("192.0.2.1"))
for _ in range(10):
    s.sendto(b"hello-group", ("239.1.2.3", 5000))
    time.sleep(0.2)
PY
wait $rpid || fail "the multicast receiver got nothing"
grep -q hello-group /tmp/mcast.out || fail "wrong multicast payload"

iperf_check 10 || fail "iperf3 byte counts differ"
tcp_digest_check 8 || fail "an 8 MiB TCP transfer arrived damaged or short"
in0 ip -s link show "$IB0"

# The carrier follows the port: veth1 down takes rxe1's port down, and
# rxe0's too (a veth loses its carrier with its peer): the ping waits for
# both to be back.
ip link set veth1 down
wait_for 30 "carrier off on $IB1" carrier_down ns1 "$IB1"
ip link set veth1 up
wait_for 60 "carrier back on $IB1" carrier_up ns1 "$IB1"
wait_for 60 "carrier back on $IB0" carrier_up ns0 "$IB0"
if ! in0 ping -c 1 -W 10 192.0.2.2; then
	# What explains it, and whether it is slow or lost for good.
	port_state
	t0=$SECONDS
	until in0 ping -c 1 -W 2 192.0.2.2 > /dev/null; do
		[ $((SECONDS - t0)) -lt 60 ] || break
	done
	say "a ping got through $((SECONDS - t0)) s later (60: never)"
	port_state
	fail "no ping after the port came back"
fi

# 6.12's rxe moves a UD QP to ERR when the network stack refuses one of
# its packets, and then reports every send and receive of it as flushed,
# with no QP event; the carrier part above does that when host 1 sends
# while veth1 is down (a run of make check failed so, before the fix).
# The interface must find its QP in ERR and restart it.  A band that
# holds nothing (pfifo limit 0) takes rxe1's UD SENDs (UDP 4791, BTH
# opcode 0x64) for one ping.  (A provider that sends the packet again
# instead leaves the QP in RTS: the checks hold as well.)
qpn1=$((0x$(ip -n ns1 -o link show "$IB1" |
	sed 's|.*link/infiniband ..:\(..\):\(..\):\(..\):.*|\1\2\3|')))
ud_restarts() { klog_count "$IB1: UD QP in error: restarting it"; }
ud_rts() {
	rdma res show qp link rxe1/1 | matches -E " lqpn $qpn1 .*state RTS"
}
ud_rts || fail "precondition: $IB1's UD QP $qpn1 is not in RTS"
serr=$(rxe_stat rxe1 send_err)
restarts=$(ud_restarts)
wire_refuse veth1 0x64 0xff
in1 ping -c 1 -W 2 192.0.2.1 > /dev/null || true
wire_clear veth1
say "UD send refused by the wire: rxe1 send_err $serr -> $(rxe_stat rxe1 send_err)"
[ "$(rxe_stat rxe1 send_err)" -gt "$serr" ] ||
	fail "precondition: rxe did not see its UD send refused"
wait_for 30 "$IB1's UD QP back in RTS, and a ping from it through" sh -c \
	"rdma res show qp link rxe1/1 | grep -Eq ' lqpn $qpn1 .*state RTS' &&
	 ip netns exec ns1 ping -c 1 -W 2 192.0.2.1"
say "$IB1's UD QP restarted $(($(ud_restarts) - restarts)) times"
in0 ping -c 3 -W 10 192.0.2.2 > /dev/null ||
	fail "no ping after $IB1's UD QP error"

# A UD send to a peer that has vanished from the network: the route to
# the peers' GIDs (link-local, on veth1) is taken away in the fabric's
# namespace.  rdma_rxe then finds no route for the send, fails it and
# moves the UD QP to ERR (rxe_requester's error path, the same on 6.1,
# 6.12 and 7.2, whatever the provider does with a packet the wire
# refuses, above).  The interface must find its QP in ERR, restart it,
# and work again once the route is back.
tx_errors() { in1 ethtool -S "$IB1" | awk '$1 == "drop_tx_error:" { print $2 }'; }
restarted() { [ "$(ud_restarts)" -gt "$restarts" ]; }
restarts=$(ud_restarts)
txerr=$(tx_errors)
ip -6 route del fe80::/64 dev veth1
in1 ping -c 1 -W 2 192.0.2.1 > /dev/null &&
	fail "a ping went out with no route to the peer's GID"
ip -6 route add fe80::/64 dev veth1
# The module logs the restart only after asking the provider for the
# QP's state: ERR (or SQE) it must have been.  Its work may still be
# queued: waited for.
wait_for 10 "precondition: the failed send putting $IB1's UD QP in ERR (and its restart)" \
	restarted
say "no route to the peer: $IB1's drop_tx_error $txerr -> $(tx_errors), UD QP restarts $(($(ud_restarts) - restarts))"
wait_for 30 "$IB1's UD QP back in RTS, and a ping from it through" sh -c \
	"rdma res show qp link rxe1/1 | grep -Eq ' lqpn $qpn1 .*state RTS' &&
	 ip netns exec ns1 ping -c 1 -W 2 192.0.2.1"
in0 ping -c 3 -W 10 192.0.2.2 > /dev/null ||
	fail "no ping after the route to the peer came back"

# Remove rxe1 under traffic: its interface goes, then comes back.
in1 iperf3 -s -1 > /dev/null 2>&1 &
spid=$!
wait_listening ns1 5201
in0 iperf3 -c 192.0.2.2 -t 60 > /dev/null 2>&1 &
cpid=$!
# Until data flows (counted by the receiving interface).
wait_rx 60 1000000 "ns1:$IB1"
rdma link del rxe1
in1 ip link show "$IB1" >/dev/null 2>&1 && fail "$IB1 still there"
# The peer is gone: TCP would retry for minutes.
kill $cpid $spid 2>/dev/null || true
wait $cpid $spid 2>/dev/null || true
rdma link add rxe1 type rxe netdev veth1
wait_for 60 "rxe1 active" rxe_active rxe1
wait_for 30 "interface on rxe1" ipoib_if_of rxe1
say "interface back as $(ipoib_if_of rxe1)"

unload_module
say "datagram: ok"
