#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# P_Key child interfaces and the rtnetlink link type "ipoib":
#   - ipoib_cm refuses to load while ib_ipoib holds the link type;
#   - children through the parent's create_child and through iproute2,
#     several with the same P_Key, each with its own UD QP and address;
#   - ip -d link show reports pkey and mode, ip link set ... type ipoib
#     mode switches it;
#   - children talk to children and parents on the other rxe device, each
#     in its own namespace, in datagram and in connected mode, with their
#     own connections;
#   - invalid P_Keys, a P_Key outside the port's table (rxe has only
#     0xffff), children of children and "ip link del" of a port's
#     interface are refused with messages;
#   - children go with ip link del, delete_child, the removal of their
#     RDMA device and the unloading of the module;
#   - no RC retry exhausted in rxe's counters before that removal.
. "$(dirname "$0")/../lib.sh"

# The ib_ipoib.ko of the running kernel, from its build directory: the
# release string is not enough (the debug and bench builds share it), the
# build's version string (its build time) is.
ib_ipoib_ko() {
	local d

	for d in ${IPOIB_CM_KDIR:-} /var/cache/ipoib_cm/kernels/*/; do
		[ -f "$d/include/generated/utsversion.h" ] || continue
		grep -qF "\"$(uname -v)\"" "$d/include/generated/utsversion.h" || continue
		if [ -f "$d/drivers/infiniband/ulp/ipoib/ib_ipoib.ko" ]; then
			echo "$d/drivers/infiniband/ulp/ipoib/ib_ipoib.ko"
			return 0
		fi
	done
	return 1
}

lladdr() {
	ip -n "$1" -o link show "$2" | sed 's|.*link/infiniband \([^ ]*\) .*|\1|'
}

rx_packets() {
	ns_sysfs "$1" "cat $2/statistics/rx_packets"
}

# debugfs directory of a child: <ibdev>-1.<pkey>.<UD QPN of its address>
child_debugfs() {
	local a
	a=$(lladdr "$1" "$2")
	echo "/sys/kernel/debug/ipoib_cm/$3-1.$4.$(echo "$a" | cut -d: -f2-4 | tr -d :)"
}

# Move interface $2 from namespace $1 to a new namespace $3 with
# 192.0.2.$4/24, up, carrier on.
child_host() {
	ip netns add "$3"
	ip netns exec "$3" sysctl -qw net.ipv6.conf.all.accept_dad=0
	ip netns exec "$3" sysctl -qw net.ipv6.conf.default.accept_dad=0
	ip -n "$1" link set "$2" netns "$3"
	ip -n "$3" link set lo up
	ip -n "$3" addr add "192.0.2.$4/24" dev "$2"
	ip -n "$3" link set "$2" up
	wait_for 60 "carrier on $2 in $3" carrier_up "$3" "$2"
}

ipd() {
	ip -n "$1" -d link show "$2"
}

# ipd_has NS IF PKEY MODE: ip -d link show reports the link type with them.
ipd_has() {
	ipd "$1" "$2" | matches -E "ipoib pkey +$3 mode +$4( |$)" ||
		fail "ip -d link show $2: no 'ipoib pkey $3 mode $4': $(ipd "$1" "$2")"
}

# must_fail WHAT KLOG-REGEX ERROR-REGEX COMMAND...: the command fails,
# its error output matches ERROR-REGEX (the errno's text, or iproute2's
# message) and the kernel log gains a line matching KLOG-REGEX.
must_fail() {
	local what=$1 re=$2 err=$3 before
	shift 3
	before=$(klog_count "$re")
	if "$@" 2> /tmp/err.out; then
		fail "$what: accepted"
	fi
	say "$what refused: $(tr '\n' ' ' < /tmp/err.out)"
	grep -Eq -- "$err" /tmp/err.out || fail "$what: error is not /$err/"
	[ "$(klog_count "$re")" -gt "$before" ] || fail "$what: no kernel message /$re/"
}

# sysfs_write NS FILE VALUE, with coreutils' echo, which names the errno.
sysfs_write() {
	ns_sysfs "$1" "/bin/echo $3 > $2"
}

fabric_single

# --- Beside ib_ipoib: ipoib_cm must refuse to load, and say why.
ko=$(ib_ipoib_ko) || fail "no ib_ipoib.ko for $(uname -r)"
insmod "$ko"
grep -qw ib_ipoib /proc/modules || fail "ib_ipoib did not load"
if load_module 2> /tmp/insmod.err; then
	fail "ipoib_cm loaded beside ib_ipoib"
fi
say "insmod beside ib_ipoib: $(cat /tmp/insmod.err)"
[ "$(klog_count 'link type "ipoib" is taken.*blacklist')" = 1 ] ||
	fail "no message about ib_ipoib"
! grep -qw ipoib_cm /proc/modules || fail "ipoib_cm half loaded"
[ ! -e /sys/kernel/debug/ipoib_cm ] || fail "debugfs left behind by a failed load"
rmmod ib_ipoib

load_module
if insmod "$ko" 2> /tmp/insmod.err; then
	fail "ib_ipoib loaded beside ipoib_cm"
fi
say "insmod ib_ipoib beside ipoib_cm: $(cat /tmp/insmod.err)"
hosts_up
ipd_has ns0 "$IB0" 0xffff datagram
[ "$(ns_sysfs ns0 "cat $IB0/pkey")" = 0xffff ] || fail "pkey file of $IB0"

# --- create_child: <parent>.<pkey>, in the parent's namespace.
ns_sysfs ns0 "echo 0xffff > $IB0/create_child" || fail "create_child 0xffff"
C0=$IB0.ffff
ipd_has ns0 "$C0" 0xffff datagram
ip -n ns0 link show "$C0" | matches "$C0@$IB0:" || fail "$C0 does not name $IB0 as its link"
[ "$(ns_sysfs ns0 "cat $C0/pkey")" = 0xffff ] || fail "pkey file of $C0"
[ ! -e "/sys/class/net/$C0" ] || fail "$C0 not in its parent's namespace"
ns_sysfs ns0 "test ! -e $C0/create_child" || fail "a child has create_child"
must_fail "a second create_child 0xffff" "$C0 exists" "File exists" \
	sysfs_write ns0 "$IB0/create_child" 0xffff

# --- iproute2: a connected-mode child and a datagram twin, same P_Key.
A=$IB1.a
B=$IB1.b
ip -n ns1 link add link "$IB1" name "$A" type ipoib pkey 0xffff mode connected ||
	fail "ip link add $A"
ip -n ns1 link add link "$IB1" name "$B" type ipoib pkey 0xffff || fail "ip link add $B"
ipd_has ns1 "$A" 0xffff connected
ipd_has ns1 "$B" 0xffff datagram
ipd_has ns1 "$IB1" 0xffff datagram
[ "$(get_mode ns1 "$A")" = connected ] || fail "$A: mode file says $(get_mode ns1 "$A")"
[ "$(link_mtu ns1 "$A")" = 65520 ] || fail "$A: MTU $(link_mtu ns1 "$A")"
[ "$(link_mtu ns1 "$B")" = 4092 ] || fail "$B: MTU $(link_mtu ns1 "$B")"
p=$(lladdr ns1 "$IB1")
a=$(lladdr ns1 "$A")
b=$(lladdr ns1 "$B")
say "addresses: $IB1 $p, $A $a, $B $b"
[ "${a:0:2}" = 80 ] || fail "$A has no RC flag"
for x in "$p" "$a" "$b"; do
	[ "${x:12}" = "${p:12}" ] || fail "$x: not the port's GID"
done
if [ "${p:3:8}" = "${a:3:8}" ] || [ "${p:3:8}" = "${b:3:8}" ] ||
   [ "${a:3:8}" = "${b:3:8}" ]; then
	fail "interfaces share a UD QPN"
fi

# Each in its own namespace: 192.0.2.3 (C0, rxe0), .4 (A), .5 (B, rxe1).
child_host ns0 "$C0" ns2 3
child_host ns1 "$A" ns3 4
child_host ns1 "$B" ns4 5
say "children up: $C0 in ns2, $A in ns3, $B in ns4"

# --- Datagram mode: child to parent, to a twin, twin to parent.
ip netns exec ns2 ping -c 2 -W 10 192.0.2.2 || fail "ping child $C0 -> parent $IB1"
ip netns exec ns2 ping -c 2 -W 10 192.0.2.5 || fail "ping child $C0 -> child $B"
ip netns exec ns4 ping -c 2 -W 10 192.0.2.1 || fail "ping child $B -> parent $IB0"
ip -n ns2 neigh show 192.0.2.5 | matches "lladdr $b" ||
	fail "192.0.2.5 not resolved to $B's address: $(ip -n ns2 neigh show)"
[ "$(rx_packets ns2 "$C0")" -ge 4 ] || fail "$C0 received nothing"
[ "$(rx_packets ns4 "$B")" -ge 4 ] || fail "$B received nothing"

# --- Connected mode: the child switches through rtnetlink, the parent
# stays in datagram mode; the connection is the child's own.
ip -n ns2 link set "$C0" type ipoib mode connected || fail "ip link set $C0 type ipoib mode connected"
ipd_has ns2 "$C0" 0xffff connected
ipd ns2 "$C0"
[ "$(get_mode ns2 "$C0")" = connected ] || fail "$C0 mode file"
[ "$(get_mode ns0 "$IB0")" = datagram ] || fail "the parent followed its child's mode"
[ "$(link_mtu ns2 "$C0")" = 65520 ] || fail "$C0: MTU $(link_mtu ns2 "$C0")"
ip netns exec ns2 ping -c 3 -i 0.3 -W 10 -M do -s 60000 192.0.2.4 ||
	fail "ping -s 60000 child $C0 -> child $A (connected)"
ip -n ns2 neigh show 192.0.2.4 | matches 'lladdr 80:' || fail "$A's address has no RC flag"
dc=$(child_debugfs ns2 "$C0" rxe0 ffff)
da=$(child_debugfs ns3 "$A" rxe1 ffff)
cat "$dc/connections" "$da/connections"
grep -q ' active live ' "$dc/connections" || fail "no live connection opened by $C0"
grep -q ' passive live ' "$da/connections" || fail "no live connection accepted by $A"
[ "$(awk '$1 == "rc_tx_packets" {print $2}' "$dc/stats")" -ge 3 ] || fail "$C0 sent nothing over RC"
! grep -q live "$(cm_debugfs rxe0)/connections" "$(cm_debugfs rxe1)/connections" ||
	fail "a parent has a connection"
ip netns exec ns2 ping -c 2 -W 10 192.0.2.5 || fail "ping connected $C0 -> datagram $B"
ip netns exec ns3 ping -c 2 -W 10 192.0.2.1 || fail "ping connected $A -> datagram parent $IB0"

# --- What is refused.
must_fail "create_child 0" "P_Key 0x0000 is invalid" "Invalid argument" \
	sysfs_write ns0 "$IB0/create_child" 0
must_fail "create_child 0x8000" "P_Key 0x8000 is invalid" "Invalid argument" \
	sysfs_write ns0 "$IB0/create_child" 0x8000
must_fail "create_child bogus" 'a P_Key is a number.*"bogus"' "Invalid argument" \
	sysfs_write ns0 "$IB0/create_child" bogus
must_fail "create_child 0x10000" 'a P_Key is a number.*"0x10000"' "Invalid argument" \
	sysfs_write ns0 "$IB0/create_child" 0x10000
must_fail "create_child 0x8001 (not in rxe's table)" \
	"P_Key 0x8001 is not in the port's P_Key table" "No such device or address" \
	sysfs_write ns0 "$IB0/create_child" 0x8001
must_fail "ip link add pkey 0x8000" "P_Key 0x8000 is invalid" "0x8000 are invalid" \
	ip -n ns0 link add link "$IB0" name bad0 type ipoib pkey 0x8000
must_fail "ip link add pkey 0" "P_Key 0x0000 is invalid" "0x8000 are invalid" \
	ip -n ns0 link add link "$IB0" name bad0 type ipoib pkey 0
must_fail "ip link add pkey 0x8001" "P_Key 0x8001 is not in the port's P_Key table" \
	"P_Key not in the port's P_Key table" \
	ip -n ns0 link add link "$IB0" name bad0 type ipoib pkey 0x8001
must_fail "a child of a child" "a child cannot have children" "is a child itself" \
	ip -n ns2 link add link "$C0" name bad0 type ipoib
must_fail "ip link add umcast 1" "umcast is not supported" "umcast is not supported" \
	ip -n ns0 link add link "$IB0" name bad0 type ipoib umcast 1
must_fail "ip link set pkey 0x8001" "the P_Key cannot change" "cannot change" \
	ip -n ns2 link set "$C0" type ipoib pkey 0x8001
must_fail "delete_child without such a child" \
	"no child with P_Key 0x8001 made by create_child" "No such device" \
	sysfs_write ns0 "$IB0/delete_child" 0x8001
if ip link add name bad0 type ipoib 2>/dev/null; then
	fail "a child without a parent"
fi
! ip -n ns0 link show bad0 2>/dev/null || fail "bad0 exists"
before=$(klog_count "the interface of a port is not deleted")
ip -n ns0 link del "$IB0" || true
ip -n ns0 link show "$IB0" > /dev/null || fail "ip link del removed $IB0"
[ "$(klog_count "the interface of a port is not deleted")" -gt "$before" ] ||
	fail "no message for ip link del $IB0"
ip netns exec ns0 ping -c 1 -W 10 192.0.2.2 || fail "$IB0 broken after ip link del"

# --- Deleting: ip link del, and delete_child (the child lives in ns2).
ip -n ns3 link del "$A" || fail "ip link del $A"
! ip -n ns3 link show "$A" 2>/dev/null || fail "$A still there"
[ ! -e "$da" ] || fail "$A's debugfs left behind"
ns_sysfs ns0 "echo 0xffff > $IB0/delete_child" || fail "delete_child 0xffff"
! ip -n ns2 link show "$C0" 2>/dev/null || fail "$C0 still there"
[ ! -e "$dc" ] || fail "$C0's debugfs left behind"

# --- Removal of the RDMA device with children, one with a connection.
ip -n ns0 link add link "$IB0" name "$IB0.x" type ipoib mode connected || fail "ip link add $IB0.x"
ip -n ns1 link add link "$IB1" name "$IB1.y" type ipoib mode connected || fail "ip link add $IB1.y"
ns_sysfs ns1 "echo 0x7fff > $IB1/create_child" || fail "create_child 0x7fff"
ip -n ns1 link show "$IB1.ffff" > /dev/null || fail "0x7fff did not give $IB1.ffff"
child_host ns0 "$IB0.x" ns5 6
child_host ns1 "$IB1.y" ns6 7
ip netns exec ns5 ping -c 2 -W 10 -s 20000 192.0.2.7 || fail "ping $IB0.x -> $IB1.y (connected)"
grep -q ' live ' "$(child_debugfs ns5 "$IB0.x" rxe0 ffff)/connections" || fail "no connection of $IB0.x"
ns_sysfs ns0 "echo 0xffff > $IB0/create_child" || fail "create_child 0xffff again"
ip -n ns0 link set "$C0" up
# The children's connected-mode traffic exhausted no RC retry.  Checked
# before rxe1 goes: its counters go with it, and a QP of rxe0 still
# sending to it then would retry in vain, as it should.
rxe_clean rxe0 rxe1
rdma link del rxe1
[ "$(klog_count 'rxe1: ipoib_cm: device removed')" = 1 ] || fail "rxe1 removal not seen"
for x in "ns1 $IB1" "ns1 $IB1.ffff" "ns4 $B" "ns6 $IB1.y"; do
	set -- $x
	! ip -n "$1" link show "$2" 2>/dev/null || fail "$2 survived the removal of rxe1"
done
! ls -d /sys/kernel/debug/ipoib_cm/rxe1-* 2>/dev/null || fail "debugfs of rxe1 left behind"
ip -n ns0 link show "$C0" > /dev/null || fail "rxe0's child went with rxe1"

# --- Unloading with children present (one in another namespace).
ls /sys/kernel/debug/ipoib_cm/
unload_module
for ns in ns0 ns2 ns5; do
	! ip -n $ns -d link show | matches ipoib || fail "an ipoib interface survived rmmod in $ns"
done
! ip -d link show | matches ipoib || fail "an ipoib interface survived rmmod"
[ ! -e /sys/kernel/debug/ipoib_cm ] || fail "debugfs survived rmmod"
hosts_down
say "children: ok"
