#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Negative CM paths, driven from outside the driver: the test module
# cm_inject (scripts/tools/cm_inject) speaks the CM from rxe1 with
# hand-made RFC 4755 private data.
#
# Towards the interface on rxe0 it sends REQs whose private data is
# malformed (receive MTU 0, below 1284, 2^32 - 1; 4 octets only; none), a
# REQ for a UC QP, a REQ to a Service ID that names another QPN, and a
# well-formed REQ to RFC 4755's own Service ID.  Each bad REQ must come
# back as a REJ with the right reason and our private data (UD QPN,
# receive MTU 65524), and be counted; the good one must be accepted and
# closed cleanly when the tool goes.
#
# Then it plays a peer the driver dials (a neighbour entry with a made-up
# UD QPN on rxe1's GID): a REP with a receive MTU of 0, a REP naming
# another UD QPN, a REJ with private data and a REJ without.  The driver
# must answer bad REPs with a REJ carrying its private data, show a REJ's
# private data in its log, count all of it and send to that peer over UD.
#
# Throughout, the connection between the two real interfaces stays up and
# an exact transfer crosses it at the end.
#
# Last, with cm_bidirectional=1 and the tool as a peer with a larger
# address: only its Consumer Reject naming the QPN dialled is taken for
# crossed REQs (rej_crossed), not one without private data or naming
# another QPN; and such a REJ's callback held until teardown waits for
# it must not leave its wait for the peer's REQ armed on a freed
# connection.
. "$(dirname "$0")/../lib.sh"

CMI=${IPOIB_CM_TOOLDIR:?}/cm_inject/cm_inject.ko
SID_OFED=0x1000000000000000
SID_IETF=0x0100000000000000

fabric_single
load_module
hosts_up
set_mode ns0 "$IB0" connected || fail "connected mode (ns0)"
set_mode ns1 "$IB1" connected || fail "connected mode (ns1)"
in0 ping -c 2 -W 10 192.0.2.2 > /dev/null || fail "no traffic before"
cm_conns rxe0 | matches ' active live ' || fail "no connection $IB0 -> $IB1"

# An interface's UD QPN (decimal) and port GID, from its link address.
if_addr() {
	ip -n "$1" -j link show "$2" | python3 -S -c '
import ipaddress, json, sys
a = bytes.fromhex(json.load(sys.stdin)[0]["address"].replace(":", ""))
print(int.from_bytes(a[1:4], "big"), ipaddress.IPv6Address(a[4:20]))'
}
read -r qpn0 gid0 < <(if_addr ns0 "$IB0")
read -r _ gid1 < <(if_addr ns1 "$IB1")
qpn0x=$(printf '0x%06x' "$qpn0")
say "target $IB0: UD QPN $qpn0x GID $gid0; injector on rxe1, GID $gid1"

# The first "cm_inject: got" line logged after a mark.
got_mark() { dmesg | grep -c 'cm_inject: got' || true; }
got_after() { dmesg | grep 'cm_inject: got' | tail -n +$(($1 + 1)) | sed -n 1p; }
has_got() { [ -n "$(got_after "$1")" ]; }

# inject EXPECT ARGS...: load the tool, wait for what comes back, check it
# against the extended regular expression EXPECT, unload the tool.
inject() {
	local expect=$1 mark line
	shift
	mark=$(got_mark)
	insmod "$CMI" "$@" || fail "cm_inject $*: insmod failed"
	wait_for 30 "an answer to cm_inject $*" has_got "$mark"
	line=$(got_after "$mark")
	say "cm_inject $*: $line"
	rmmod cm_inject
	[[ $line =~ $expect ]] || fail "cm_inject $*: expected /$expect/"
}

stats0() {
	local n

	for n in req_rejected req_malformed conn_passive_up conn_failed \
		rep_malformed rej_received fallback_tx_packets; do
		printf '%s=%s ' "$n" "$(cm_stat rxe0 "$n")"
	done
}
delta() { echo $(($(cm_stat rxe0 "$1") - $2)); }

# --- Bad REQs towards $IB0 ---
rej0=$(cm_stat rxe0 req_rejected)
bad0=$(cm_stat rxe0 req_malformed)
ours="pdata yes qpn $qpn0x mtu 65524"
req() { inject "$1" mode=req dev=rxe1 dgid="$gid0" "${@:2}"; }
sid0=$(printf '0x%x' $((SID_OFED | qpn0)))
req "got REJ reason 26 .* $ours\$" sid="$sid0" pd_mtu=0
req "got REJ reason 26 .* $ours\$" sid="$sid0" pd_mtu=1000
req "got REJ reason 26 .* $ours\$" sid="$sid0" pd_mtu=4294967295
req "got REJ reason 26 .* $ours\$" sid="$sid0" pd_len=4
req "got REJ reason 26 .* $ours\$" sid="$sid0" pd_len=0
req "got REJ reason 9 .* $ours\$" sid="$sid0" qp_type=uc
say "after bad REQs: $(stats0)"
[ "$(delta req_malformed "$bad0")" = 6 ] || fail "malformed REQs counted $(delta req_malformed "$bad0") times, not 6"
[ "$(delta req_rejected "$rej0")" = 6 ] || fail "rejected REQs counted $(delta req_rejected "$rej0") times, not 6"

# A Service ID naming another QPN: the CM refuses it, the driver never sees it.
req "got REJ reason 8 " sid="$(printf '0x%x' $((SID_OFED | ((qpn0 + 1) & 0xffffff))))"
[ "$(delta req_rejected "$rej0")" = 6 ] || fail "a REQ for another Service ID reached the driver"

# RFC 4755's Service ID: accepted, and closed when the tool goes.
up0=$(cm_stat rxe0 conn_passive_up)
closed0=$(cm_stat rxe0 conn_closed)
mark=$(got_mark)
insmod "$CMI" mode=req dev=rxe1 dgid="$gid0" sid="$(printf '0x%x' $((SID_IETF | qpn0)))" ||
	fail "cm_inject: insmod failed"
wait_for 30 "a REP on RFC 4755's Service ID" has_got "$mark"
line=$(got_after "$mark")
say "REQ on RFC 4755's Service ID: $line"
[[ $line =~ "got REP pdata qpn $qpn0x mtu 65524" ]] || { rmmod cm_inject; fail "not accepted"; }
wait_for 20 "the accepted connection live" sh -c \
	"grep -q ' 0x00c0de passive live ' $(cm_debugfs rxe0)/connections"
cm_conns rxe0
[ "$(delta conn_passive_up "$up0")" = 1 ] || fail "accepted connection not counted"
rmmod cm_inject
wait_for 30 "the tool's connection closed" sh -c \
	"[ \$(awk '\$1 == \"conn_closed\" {print \$2}' $(cm_debugfs rxe0)/stats) -gt $closed0 ]"

# --- A peer the driver dials: the tool listens on rxe1 for a made-up QPN ---
dial() {
	local n=$1 fake=$2
	local lladdr

	lladdr=$(python3 -S -c '
import ipaddress, sys
b = bytes([0x80]) + int(sys.argv[1]).to_bytes(3, "big") + ipaddress.IPv6Address(sys.argv[2]).packed
print(":".join("%02x" % x for x in b))' "$fake" "$gid1")
	in0 ip neigh replace "192.0.2.$n" lladdr "$lladdr" dev "$IB0" nud permanent
	in0 ping -c 3 -i 0.5 -W 1 "192.0.2.$n" > /dev/null 2>&1 || true
}
# listen N FAKEQPN EXPECT ARGS...: the tool answers as ARGS say, the driver
# dials it by sending to 192.0.2.N; EXPECT is what the tool receives.
listen() {
	local n=$1 fake=$2 expect=$3 mark line
	shift 3

	mark=$(got_mark)
	insmod "$CMI" mode=listen dev=rxe1 sid="$(printf '0x%x' $((SID_OFED | fake)))" "$@" ||
		fail "cm_inject listen $*: insmod failed"
	dial "$n" "$fake"
	wait_for 30 "a REQ from $IB0 for QPN $fake" has_got "$mark"
	if [ -n "$expect" ]; then
		wait_for 30 "an answer from $IB0" sh -c \
			"dmesg | grep 'cm_inject: got' | tail -n +$((mark + 2)) | grep -q ."
		line=$(dmesg | grep 'cm_inject: got' | tail -n +$((mark + 2)) | sed -n 1p)
		say "listen $*: $line"
		[[ $line =~ $expect ]] || { rmmod cm_inject; fail "listen $*: expected /$expect/"; }
	fi
	rmmod cm_inject
}

# Every REQ the tool receives is one dial: $IB0 dials again (after 1 s)
# while the ping lasts, so the counts follow the REQs, not the peers.
reqs() { dmesg | grep -c 'cm_inject: got REQ' || true; }
reqs0=$(reqs)
failed0=$(cm_stat rxe0 conn_failed)
badrep0=$(cm_stat rxe0 rep_malformed)
rejr0=$(cm_stat rxe0 rej_received)
fb0=$(cm_stat rxe0 fallback_tx_packets)
f=$((0x0f0001))
listen 61 $f "got REJ reason 26 .* $ours\$" answer=rep pd_qpn=$f pd_mtu=0
listen 62 $((f + 1)) "got REJ reason 5 .* $ours\$" answer=rep pd_qpn=$((f + 100))
n=$(($(reqs) - reqs0))
[ "$n" -ge 2 ] || fail "only $n REQs reached the tool"
[ "$(delta rep_malformed "$badrep0")" = "$n" ] ||
	fail "malformed REPs counted $(delta rep_malformed "$badrep0") times, for $n REPs"
reqs1=$(reqs)

mark=$(klog_count 'REJ from .*: reason 28 .*peer UD QPN 0x0f0003, receive MTU 65524')
listen 63 $((f + 2)) "" answer=rej pd_qpn=$((f + 2))
wait_for 20 "the REJ's private data in the log" sh -c \
	"[ \$(dmesg | grep -cE 'REJ from .*: reason 28 .*peer UD QPN 0x0f0003, receive MTU 65524') -gt $mark ]"
mark=$(klog_count 'REJ from .*: reason 28 .*no IPoIB private data')
listen 64 $((f + 3)) "" answer=rej pd_len=0
wait_for 20 "a REJ without private data in the log" sh -c \
	"[ \$(dmesg | grep -cE 'REJ from .*: reason 28 .*no IPoIB private data') -gt $mark ]"
n=$(($(reqs) - reqs1))
wait_for 20 "$n REJs counted" sh -c \
	"[ \$(awk '\$1 == \"rej_received\" {print \$2}' $(cm_debugfs rxe0)/stats) -ge $((rejr0 + n)) ]"
say "after the dialled peers: $(stats0)"
cm_conns rxe0
[ "$(delta rej_received "$rejr0")" = "$n" ] ||
	fail "REJs counted $(delta rej_received "$rejr0") times, for $n REJs"
n=$(($(reqs) - reqs0))
[ "$(delta conn_failed "$failed0")" = "$n" ] ||
	fail "failed connections counted $(delta conn_failed "$failed0") times, for $n dials"
[ "$(delta fallback_tx_packets "$fb0")" -gt 0 ] || fail "nothing sent over UD to the refused peers"

# Nothing else changed: the real connection is still there, and exact.
cm_conns rxe0 | matches ' active live ' || fail "the connection $IB0 -> $IB1 is gone"
tcp_digest_check 8 || fail "an 8 MiB transfer arrived damaged or short"
unload_checked
hosts_down

# --- Which REJ means crossed REQs (cm_bidirectional=1) ---
# RFC 4755 3.3: of two crossing REQs, the larger address refuses the other
# with a Consumer Reject, and every REJ carries its sender's UD QPN.  The
# tool's made-up QPNs make its address the larger one.  Only a Consumer
# Reject naming the QPN dialled is taken for a crossing (rej_crossed; the
# connection then waits for the peer's REQ); one without private data, or
# naming another QPN, is a refusal like any other.
load_module cm_bidirectional=1
hosts_up
set_mode ns0 "$IB0" connected || fail "connected mode (ns0, bidirectional)"
read -r qpn0 _ < <(if_addr ns0 "$IB0")
[ "$qpn0" -lt "$f" ] || fail "precondition: $IB0's UD QPN $qpn0 is not below the tool's"
rejs_above() {
	wait_for 20 "$1" sh -c \
		"[ \$(awk '\$1 == \"rej_received\" {print \$2}' $(cm_debugfs rxe0)/stats) -gt $2 ]"
}
crossed0=$(cm_stat rxe0 rej_crossed)
rejr0=$(cm_stat rxe0 rej_received)
listen 65 $((f + 4)) "" answer=rej pd_len=0
rejs_above "the REJ without private data" "$rejr0"
rejr0=$(cm_stat rxe0 rej_received)
listen 66 $((f + 5)) "" answer=rej pd_qpn=$((f + 105))
rejs_above "the REJ naming another QPN" "$rejr0"
say "REJs without the dialled QPN: $(delta rej_crossed "$crossed0") taken for crossings"
[ "$(delta rej_crossed "$crossed0")" = 0 ] ||
	fail "a Consumer Reject without the dialled QPN was taken for crossed REQs"
rejr0=$(cm_stat rxe0 rej_received)
listen 67 $((f + 6)) "" answer=rej pd_qpn=$((f + 6))
rejs_above "the REJ naming the QPN dialled" "$rejr0"
say "REJ naming the QPN dialled: $(delta rej_crossed "$crossed0") taken for crossings"
[ "$(delta rej_crossed "$crossed0")" -ge 1 ] ||
	fail "a Consumer Reject naming the QPN dialled was not taken for crossed REQs"

# --- A crossing's REJ that teardown overtakes ---
# Taken for a crossing, a REJ arms the connection's wait for the peer's
# REQ (4 s).  Held by cm_hold (scripts/tools/cm_hold) until $IB0 leaves
# connected mode and its reaper, having taken the CM id, waits in
# ib_destroy_cm_id() for it, then let go: it arms the wait on a
# connection being freed, and teardown must cancel that wait after the
# callback has returned.  Precondition: it was held and taken for a
# crossing.  Then 6 s pass, and nothing may touch the freed connection
# (KASAN, read by the runner).  The tool is not unloaded while the
# callback is held: that waits for an RCU grace period.
HOLD=/sys/module/cm_hold/parameters
crossed0=$(cm_stat rxe0 rej_crossed)
mark=$(got_mark)
insmod "$CMI" mode=listen dev=rxe1 sid="$(printf '0x%x' $((SID_OFED | (f + 7))))" \
	answer=rej pd_qpn=$((f + 7)) || fail "cm_inject listen: insmod failed"
insmod "${IPOIB_CM_TOOLDIR:?}/cm_hold/cm_hold.ko" event=rej
switch_writer ns0 "$IB0" datagram
echo 1 > "$HOLD/count"
dial 68 $((f + 7)) &
dialler=$!
wait_explain 60 "the crossing's REJ callback to be held" \
	"cm_dump; dmesg | grep 'cm_inject: got' | tail -n +$((mark + 1))" \
	sh -c "[ \$(cat $HOLD/held) = 1 ]"
[ "$(cat "$HOLD/released")" = 0 ] ||
	fail "precondition: the REJ callback was let go before the switch"
switch_go
release_when_destroy_waits "the crossing's REJ" "$IB0"
wait "$SWITCH_PID" || fail "the mode switch of $IB0 failed"
wait "$dialler" || true
[ "$(delta rej_crossed "$crossed0")" = 1 ] ||
	fail "precondition: the held REJ was not taken for a crossing (rej_crossed +$(delta rej_crossed "$crossed0"))"
sleep 6
rmmod cm_hold
rmmod cm_inject
! cm_conns rxe0 | matches . ||
	fail "$IB0 kept a connection after leaving connected mode: $(cm_conns rxe0)"
say "a crossing's REJ held past teardown: counted, its wait cancelled with the connection"
rxe_clean rxe0 rxe1
unload_checked
say "cm-negative: ok"
