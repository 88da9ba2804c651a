#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# systemd-networkd configures an interface as an administrator would
# (Documentation/admin-guide.rst, "systemd-networkd"): the module loaded
# with default_mode=connected (networkd 252 has no [IPoIB] section in a
# .network: "Unknown section"), host 0's interface in namespace ns0 with
# no address, and the Debian 12 systemd-networkd of the host root, started
# there, gives it its addresses from a .network file and creates a P_Key
# child from a .netdev (Kind=ipoib, [IPoIB] PartitionKey= and Mode=) named
# by the parent's IPoIB= line.  networkd gives every netdev it creates a
# link address, which ipoib_cm ignores (a child's is its UD QPN and the
# port's GID).  Host 1 is set up by hand.  Then an exact transfer over RC
# on the parent and traffic over RC on the child.
#
# networkd runs as a plain process, not under systemd as PID 1: in a mount
# namespace of its own where /sys is read-only, which tells it that no
# udev will announce the links (it would wait for udev forever), on a
# system bus of the test's own (dbus-daemon --system).
. "$(dirname "$0")/../lib.sh"

ND=/lib/systemd/systemd-networkd
CONF=/run/systemd/network
CHILD=ibnd0
CHILD2=ibnd1

[ -x "$ND" ] || fail "no $ND in the root"
say "$("$ND" --version | sed -n 1p)"

fabric_single
load_module default_mode=connected
host_up 1
host_wait 1
IF0=$(ipoib_if_of rxe0) || fail "no interface on rxe0"
ip netns add ns0
ip netns exec ns0 sysctl -qw net.ipv6.conf.all.accept_dad=0
ip netns exec ns0 sysctl -qw net.ipv6.conf.default.accept_dad=0
ip link set "$IF0" netns ns0
ip -n ns0 link set lo up
IB0=$IF0
[ -z "$(ip -n ns0 -o addr show dev "$IF0" scope global)" ] ||
	fail "precondition: $IF0 has an address before networkd"

# Host 1's child, by hand: same P_Key (rxe has only the default one).
ip -n ns1 link add link "$IB1" name ibc1 type ipoib pkey 0xffff mode connected ||
	fail "ip link add ibc1"
ip -n ns1 addr add 2001:db8:1::2/64 dev ibc1 nodad
ip -n ns1 link set ibc1 up

# --- The configuration, as Documentation/admin-guide.rst gives it ---
mkdir -p "$CONF"
cat > "$CONF/50-ipoib.network" <<EOF
[Match]
Name=$IF0

[Network]
Address=192.0.2.1/24
Address=2001:db8::1/64
IPoIB=$CHILD
IPoIB=$CHILD2
EOF
cat > "$CONF/50-$CHILD.netdev" <<EOF
[NetDev]
Name=$CHILD
Kind=ipoib

[IPoIB]
PartitionKey=0xffff
Mode=connected
EOF
# A second child in datagram mode: networkd's Mode= is what decides.
cat > "$CONF/50-$CHILD2.netdev" <<EOF
[NetDev]
Name=$CHILD2
Kind=ipoib

[IPoIB]
PartitionKey=0xffff
Mode=datagram
EOF
cat > "$CONF/50-$CHILD.network" <<EOF
[Match]
Name=$CHILD

[Network]
Address=2001:db8:1::1/64
EOF
head -n 100 "$CONF"/*

# The system bus networkd registers on: without one it waits for the
# socket to appear, through inotify, which the test kernel does not have.
if [ ! -S /run/dbus/system_bus_socket ]; then
	mkdir -p /run/dbus
	dbus-daemon --system --fork --nopidfile ||
		fail "no system bus (dbus-daemon --system)"
fi
wait_for 10 "the system bus" test -S /run/dbus/system_bus_socket

ip netns exec ns0 unshare -m --propagation private sh -c \
	"mount -o remount,ro /sys && exec env SYSTEMD_LOG_LEVEL=debug $ND" \
	> "$VMOUT/networkd.log" 2>&1 &
ndpid=$!
stop_networkd() {
	kill "$ndpid" 2>/dev/null || true
	wait "$ndpid" 2>/dev/null || true
}
trap stop_networkd EXIT

has_addr() { ip -n ns0 -o addr show dev "$1" | matches -F " $2/"; }
wait_for 60 "networkd to give $IF0 192.0.2.1" has_addr "$IF0" 192.0.2.1
wait_for 30 "networkd to give $IF0 2001:db8::1" has_addr "$IF0" 2001:db8::1
wait_for 30 "networkd to create $CHILD" ip -n ns0 link show "$CHILD"
wait_for 30 "networkd to give $CHILD 2001:db8:1::1" has_addr "$CHILD" 2001:db8:1::1
wait_for 30 "$CHILD up" carrier_up ns0 "$CHILD"
ip -n ns0 -d link show "$CHILD" | matches -E "ipoib pkey +0xffff mode +connected( |$)" ||
	fail "$CHILD is not a connected-mode child of P_Key 0xffff: $(ip -n ns0 -d link show "$CHILD")"
ip -n ns0 link show "$CHILD" | matches "$CHILD@$IF0:" || fail "$CHILD is not a child of $IF0"
wait_for 30 "networkd to create $CHILD2" ip -n ns0 link show "$CHILD2"
ip -n ns0 -d link show "$CHILD2" | matches -E "ipoib pkey +0xffff mode +datagram( |$)" ||
	fail "$CHILD2 is not a datagram-mode child: $(ip -n ns0 -d link show "$CHILD2")"
[ "$(get_mode ns0 "$IF0")" = connected ] || fail "$IF0 is not in connected mode (default_mode)"
# Its own UD QPN and the port's GID, whatever networkd asked for.
lladdr() { ip -n ns0 -o link show "$1" | sed 's|.*link/infiniband \([^ ]*\) .*|\1|'; }
a0=$(lladdr "$IF0")
ac=$(lladdr "$CHILD")
say "link addresses: $IF0 $a0, $CHILD $ac; networkd asked for" \
	"$(sed -n "s/^$CHILD: Using MAC address: //p" "$VMOUT/networkd.log")"
[ "${ac:12}" = "${a0:12}" ] && [ "${ac:3:8}" != "${a0:3:8}" ] ||
	fail "$CHILD's link address $ac is not its own QPN with $IF0's GID"
grep -E "^($IF0|$CHILD): " "$VMOUT/networkd.log" | grep -iE 'state changed|ipoib|fail' | tail -n 20 || true
say "networkd configured $IF0 and $CHILD"
ip -n ns0 addr show

# --- Traffic over RC, on the parent and on the child ---
tx0=$(cm_stat rxe0 rc_tx_packets)
in0 ping -c 3 -W 10 192.0.2.2 > /dev/null || fail "ping $IF0 -> host 1"
tcp_digest_check 8 ns0 ns1 2001:db8::2 || fail "an 8 MiB transfer over $IF0 arrived damaged or short"
[ "$(cm_stat rxe0 rc_tx_packets)" -gt "$tx0" ] || fail "nothing went over RC from $IF0"
cm_conns rxe0 | matches ' active live ' || fail "no connection from $IF0"
in0 ping -6 -c 3 -W 10 2001:db8:1::2 > /dev/null || fail "ping6 $CHILD -> ibc1"
# Its debugfs directory: <ibdev>-1.<P_Key>.<its UD QPN> (two children here).
child_dir=/sys/kernel/debug/ipoib_cm/rxe0-1.ffff.$(echo "$ac" | cut -d: -f2-4 | tr -d :)
[ -d "$child_dir" ] || fail "no debugfs directory $child_dir of $CHILD"
[ "$(awk '$1 == "rc_tx_packets" {print $2}' "$child_dir/stats")" -gt 0 ] ||
	fail "nothing went over RC from $CHILD"

stop_networkd
trap - EXIT
rxe_clean rxe0 rxe1
unload_checked
say "networkd: ok"
