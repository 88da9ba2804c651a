#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The administrator's tools: modinfo describes every parameter (with its
# default); ethtool -i, -g (and -G refused), -S with the same counters as
# debugfs, a drop counted by reason with its tracepoint, the RC counters
# following a connected-mode ping, and the connection-state tracepoint
# firing while the connection is set up and torn down (read from tracefs);
# no RC retry exhausted in rxe's counters.
. "$(dirname "$0")/../lib.sh"

TRACING=/sys/kernel/tracing
KO=$MODDIR/ipoib_cm.ko

# ethtool -S value: es NS IFACE COUNTER
es() {
	ip netns exec "$1" ethtool -S "$2" | awk -v n="$3:" '$1 == n { print $2 }'
}

# Counter names of ethtool -S, one per line.
es_names() {
	ip netns exec "$1" ethtool -S "$2" | awk 'NR > 1 { sub(":", "", $1); print $1 }'
}

# The "Current hardware settings" value of ethtool -g: eg NS IFACE FIELD
eg() {
	ip netns exec "$1" ethtool -g "$2" |
		awk -v f="$3:" '/^Current/ { cur = 1 } cur && index($0, f) == 1 { print $NF; exit }'
}

# modinfo, before loading: every parameter described, each with a default.
modinfo -F parm "$KO" | tee /tmp/parms
nparm=$(wc -l < /tmp/parms)
[ "$nparm" -ge 8 ] || fail "modinfo lists $nparm parameters"
[ "$(grep -c '(default [^)]*)' /tmp/parms)" = "$nparm" ] ||
	fail "a parameter description has no default: $(grep -v '(default ' /tmp/parms)"
grep -v '^[a-z_]*:[A-Z]' /tmp/parms && fail "a parameter has no description"

fabric_single
load_module
# The loaded module has exactly the parameters modinfo described.
diff <(cut -d: -f1 /tmp/parms | sort) <(ls /sys/module/ipoib_cm/parameters | sort) ||
	fail "modinfo and /sys/module/ipoib_cm/parameters differ"
hosts_up

# ethtool -i
in0 ethtool -i "$IB0" | tee /tmp/drvinfo
grep -qx 'driver: ipoib_cm' /tmp/drvinfo || fail "ethtool -i: driver"
grep -qx 'bus-info: rxe0' /tmp/drvinfo || fail "ethtool -i: bus-info"

# ethtool -g: the module parameters' sizes; -G refused.
in0 ethtool -g "$IB0"
[ "$(eg ns0 "$IB0" RX)" = 256 ] || fail "ethtool -g: RX $(eg ns0 "$IB0" RX)"
[ "$(eg ns0 "$IB0" TX)" = 256 ] || fail "ethtool -g: TX $(eg ns0 "$IB0" TX)"
[ "$(eg ns0 "$IB0" 'RX Jumbo')" = 256 ] || fail "ethtool -g: RX Jumbo"
if in0 ethtool -G "$IB0" rx 512 2> /tmp/setring; then
	fail "ethtool -G accepted"
fi
cat /tmp/setring
grep -qi 'not supported' /tmp/setring || fail "ethtool -G: unexpected error"

# ethtool -S: the debugfs counters, same names, same order.
es_names ns0 "$IB0" > /tmp/es-names
awk '{ print $1 }' "$(cm_debugfs rxe0)/stats" > /tmp/dfs-names
diff /tmp/es-names /tmp/dfs-names || fail "ethtool -S and debugfs stats differ"
say "ethtool -S: $(wc -l < /tmp/es-names) counters"
for c in ud_rx_packets ud_tx_packets rc_tx_packets rc_rx_packets \
	 conn_active_up req_rejected held_before_rts conn_failed \
	 conn_idle_reaped drop_no_path drop_not_ready; do
	grep -qx "$c" /tmp/es-names || fail "ethtool -S has no $c"
done

[ -d $TRACING/events/ipoib_cm ] || fail "no ipoib_cm events in tracefs"
echo > $TRACING/trace
echo 'reason != "own_multicast"' > $TRACING/events/ipoib_cm/ipoib_drop/filter
echo 1 > $TRACING/events/ipoib_cm/ipoib_drop/enable
echo 1 > $TRACING/events/ipoib_cm/ipoib_cm_state/enable

# A drop with a reason: a neighbour whose GID is not a RoCE link-local
# (EUI-64) GID has no path.
np=$(es ns0 "$IB0" drop_no_path)
in0 ip neigh replace 192.0.2.99 dev "$IB0" nud permanent \
	lladdr 00:00:00:42:fe:80:00:00:00:00:00:00:12:34:56:78:9a:bc:de:f0
in0 ping -c 1 -W 2 192.0.2.99 && fail "ping to a GID without a path answered"
[ "$(es ns0 "$IB0" drop_no_path)" -gt "$np" ] || fail "drop_no_path did not grow"
grep -q "ipoib_drop: $IB0: 1 dropped: no_path" $TRACING/trace ||
	fail "no ipoib_drop event for no_path"

# Connected mode: the first ping (after ARP, over UD) dials a connection.
set_mode ns0 "$IB0" connected || fail "echo connected > mode (ns0)"
set_mode ns1 "$IB1" connected || fail "echo connected > mode (ns1)"
tx0=$(es ns0 "$IB0" rc_tx_packets)
rx1=$(es ns1 "$IB1" rc_rx_packets)
up0=$(es ns0 "$IB0" conn_active_up)
in0 ping -c 3 -i 0.3 -W 10 192.0.2.2 || fail "ping in connected mode"
cm_conns rxe0
tx0=$(($(es ns0 "$IB0" rc_tx_packets) - tx0))
rx1=$(($(es ns1 "$IB1" rc_rx_packets) - rx1))
up0=$(($(es ns0 "$IB0" conn_active_up) - up0))
say "ethtool -S: $IB0 rc_tx_packets +$tx0, conn_active_up +$up0; $IB1 rc_rx_packets +$rx1"
[ "$tx0" -ge 3 ] || fail "rc_tx_packets grew by $tx0 for 3 pings"
[ "$rx1" -ge 3 ] || fail "rc_rx_packets of the peer grew by $rx1"
[ "$up0" = 1 ] || fail "conn_active_up grew by $up0"

# The state changes, with the peer's UD QPN (from its link address).
qpn1=0x$(ip -n ns1 -o link show "$IB1" | sed 's/.*link\/infiniband ..:\(..\):\(..\):\(..\):.*/\1\2\3/')
qpn0=0x$(ip -n ns0 -o link show "$IB0" | sed 's/.*link\/infiniband ..:\(..\):\(..\):\(..\):.*/\1\2\3/')
set_mode ns0 "$IB0" datagram || fail "echo datagram > mode (ns0)"
grep ipoib_cm_state $TRACING/trace | tee /tmp/states
for want in "$IB0 peer [0-9a-f:]* qpn $qpn1 active rc_qpn 0x[0-9a-f]*: new -> req-sent on start" \
	    "$IB0 peer [0-9a-f:]* qpn $qpn1 active rc_qpn 0x[0-9a-f]*: req-sent -> live on rep" \
	    "$IB1 peer [0-9a-f:]* qpn $qpn0 passive rc_qpn 0x[0-9a-f]*: rep-sent -> live on \(rtu\|comm-est\)" \
	    "$IB0 peer [0-9a-f:]* qpn $qpn1 active rc_qpn 0x[0-9a-f]*: live -> closing on shutdown"; do
	grep -q "ipoib_cm_state: $want" /tmp/states || fail "no trace event: $want"
done

echo 0 > $TRACING/events/ipoib_cm/enable
# The connected-mode pings and the teardown exhausted no RC retry.
rxe_clean rxe0 rxe1
unload_module
say "admin: ok"
