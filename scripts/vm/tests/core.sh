#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 1500
# The module's core in one VM, each part cut down from the scenario that
# owns it, for the kernels where the test command does not run those
# scenarios in full: the 7.2 debug kernel (debug72-core) and Debian 12's
# own (stock-dkms: the module DKMS installed, loaded by modprobe).
#  - the RTR window with the RTU lost on the wire, with the SRQ and
#    without: rtr.sh's rtu_lost part (a burst held while the accepting
#    QP is in RTR arrives whole and in order; exact transfers both ways
#    over one connection, every RC QP of the no-SRQ run receiving);
#  - datagram mode: ping, ping6, iperf3 for 10 s and an exact 4 MiB
#    transfer, none of it over RC;
#  - echo connected > mode on both ends: MTU 65520, an exact 8 MiB
#    transfer over RC, every RC QP on its SRQ;
#  - teardown under iperf3: the mode switched back to datagram, then
#    rmmod (modprobe -r), with the SRQ and without; connected mode stops
#    within 10 s each time and nothing is left behind.
. "$(dirname "$0")/../lib.sh"

# Host 0 has sent more than $1 bytes over RC.
rc_sent_more() {
	[ "$(cm_stat rxe0 rc_tx_bytes)" -gt "$1" ]
}

# teardown_under_iperf WHAT COMMAND...: COMMAND while iperf3 runs from
# host 0 to host 1 over RC; the kernel must report connected mode stopped
# (within 10 s) on the interfaces COMMAND stops.
teardown_under_iperf() {
	local what=$1 lines rc0
	shift

	in1 iperf3 -s -1 > /dev/null 2>&1 &
	local spid=$!
	wait_listening ns1 5201
	in0 iperf3 -c 192.0.2.2 -t 120 > /dev/null 2>&1 &
	local cpid=$!
	rc0=$(cm_stat rxe0 rc_tx_bytes)
	# Precondition: the teardown meets traffic over RC.
	wait_for 60 "iperf3 under way over RC" rc_sent_more $((rc0 + (1 << 20)))
	lines=$(dmesg | wc -l)
	"$@" || fail "$what failed"
	closing_judged "$what under iperf3" "$lines"
	kill "$cpid" "$spid" 2>/dev/null || true
	wait "$cpid" "$spid" 2>/dev/null || true
}

# 1. The RTR window (and its fabric, which the rest uses).
RTR_PARTS="srq nosrq" "$(dirname "$0")/rtr.sh"

# 2. Datagram mode.
say "== datagram mode"
load_module
hosts_up
[ "$(get_mode ns0 "$IB0")" = datagram ] || fail "new interfaces are not in datagram mode"
in0 ping -c 3 -i 0.3 -W 10 192.0.2.2 || fail "ping"
in0 ping -6 -c 3 -i 0.3 -W 10 2001:db8::2 || fail "ping6"
iperf_check 10 || fail "iperf3 byte counts differ"
tcp_digest_check 4 || fail "a 4 MiB transfer over UD arrived damaged or short"
[ "$(cm_stat rxe0 rc_tx_packets)" = 0 ] || fail "datagram mode sent over RC"

# 3. Connected mode, as an administrator sets it.
say "== echo connected > mode"
set_mode ns0 "$IB0" connected || fail "echo connected > mode (ns0)"
set_mode ns1 "$IB1" connected || fail "echo connected > mode (ns1)"
for i in 0 1; do
	ifname=IB$i
	mtu=$(link_mtu ns$i "${!ifname}")
	[ "$mtu" = 65520 ] || fail "${!ifname}: MTU $mtu in connected mode, expected 65520"
done
in0 ip neigh flush dev "$IB0"
in1 ip neigh flush dev "$IB1"
rc1=$(cm_stat rxe1 rc_rx_bytes)
tcp_digest_check 8 || fail "an 8 MiB transfer over RC arrived damaged or short"
[ $(($(cm_stat rxe1 rc_rx_bytes) - rc1)) -gt $((8 << 20)) ] ||
	fail "the transfer did not go over RC"
in1 ping -c 2 -i 0.3 -W 10 192.0.2.1 > /dev/null || fail "ping 1 -> 0"
srq_check rxe0 srq || fail "an RC QP of $IB0 is not on its SRQ"
srq_check rxe1 srq || fail "an RC QP of $IB1 is not on its SRQ"
rxe_clean rxe0 rxe1

# 4. Teardown under traffic, with the SRQ: a mode switch, then rmmod.
say "== teardown with the SRQ"
switch_back() {
	set_mode ns0 "$IB0" datagram && set_mode ns1 "$IB1" datagram
}
teardown_under_iperf "echo datagram > mode" switch_back
set_mode ns0 "$IB0" connected || fail "echo connected > mode again (ns0)"
set_mode ns1 "$IB1" connected || fail "echo connected > mode again (ns1)"
in0 ip neigh flush dev "$IB0"
in1 ip neigh flush dev "$IB1"
teardown_under_iperf rmmod unload_checked
hosts_down

# 5. Without the SRQ.
say "== teardown without the SRQ"
load_module cm_srq=0 default_mode=connected
hosts_up
in0 ping -c 2 -i 0.3 -W 10 192.0.2.2 > /dev/null || fail "ping 0 -> 1 (no SRQ)"
in1 ping -c 2 -i 0.3 -W 10 192.0.2.1 > /dev/null || fail "ping 1 -> 0 (no SRQ)"
srq_check rxe0 none || fail "an RC QP of $IB0 is on an SRQ with cm_srq=0"
srq_check rxe1 none || fail "an RC QP of $IB1 is on an SRQ with cm_srq=0"
teardown_under_iperf rmmod unload_checked
hosts_down
say "core: ok"
