# SPDX-License-Identifier: GPL-2.0
# Helpers for the scenarios that run inside the test VM.  Sourced.
#
# IPOIB_CM_MODDIR names the directory holding the ipoib_cm.ko built for the
# running kernel (and kunit/ipoib_cm_kunit.ko).

set -euo pipefail

MODDIR=${IPOIB_CM_MODDIR:?IPOIB_CM_MODDIR is not set}
VMOUT=/tmp/vmout

# Use "producer | matches PATTERN", never "| grep -q", under pipefail:
# grep -q exits at its first match, a producer still writing then dies of
# SIGPIPE and the pipeline fails although the line was there (seen as a
# false "no neighbour entry": iproute2 flushes after every entry).  The
# same goes for "| head": take lines with "sed -n".
matches() { grep "$@" > /dev/null; }

# The guest's uptime, read by the shell: no process to start.
say() {
	local up rest

	read -r up rest < /proc/uptime
	echo "[$up] $*"
}
fail() { say "FAIL: $*"; exit 1; }

# Poll until a command succeeds; fail after $1 seconds.
wait_for() {
	wait_explain "$1" "$2" : "${@:3}"
}

# wait_explain SECS WHAT STATE COMMAND...: as wait_for, and on timeout
# STATE (a shell command, eval'ed) first shows the state that explains it.
wait_explain() {
	local secs=$1 what=$2 state=$3
	shift 3
	local end=$((SECONDS + secs))

	until "$@" >/dev/null 2>&1; do
		if [ $SECONDS -ge $end ]; then
			[ "$state" = : ] || { say "waiting for $what: the state"; eval "$state" || true; }
			fail "timed out after ${secs}s waiting for $what"
		fi
		sleep 0.2
	done
}

rxe_active() {
	rdma link show "$1/1" | matches 'state ACTIVE'
}

# Single-VM fabric: veth0 <-> veth1 (MTU 9000, so rxe uses IB MTU 4096),
# rxe0 on veth0 and rxe1 on veth1.  Both veths stay in init_net (rxe needs
# that); the IPoIB interfaces are moved into namespaces ns0/ns1 by the
# scenarios that pass traffic.
fabric_single() {
	sysctl -qw net.ipv4.conf.all.accept_local=1
	sysctl -qw net.ipv4.conf.all.rp_filter=0
	sysctl -qw net.ipv4.conf.default.rp_filter=0
	sysctl -qw net.ipv6.conf.default.accept_dad=0
	ip link add veth0 mtu 9000 type veth peer name veth1 mtu 9000
	ip link set veth0 up
	ip link set veth1 up
	rdma link add rxe0 type rxe netdev veth0
	rdma link add rxe1 type rxe netdev veth1
	wait_for 60 "rxe0 active" rxe_active rxe0
	wait_for 60 "rxe1 active" rxe_active rxe1
	say "fabric up: rxe0 on veth0, rxe1 on veth1"
}

# The single-VM fabric and the hosts' namespaces gone, for another
# scenario in the same VM (scripts/vm/stock-dkms.sh).
fabric_gone() {
	local d

	hosts_down
	for d in $(rdma link show | awk '$1 == "link" { sub("/.*", "", $2); print $2 }'); do
		rdma link del "$d"
	done
	ip link del veth0 2>/dev/null || true
}

# The module as built ($MODDIR), or, with IPOIB_CM_MODPROBE=1, as
# installed: modprobe finds it and its dependencies (scripts/vm/stock-dkms.sh),
# and modprobe -r takes out what it loaded.
load_module() {
	if [ "${IPOIB_CM_MODPROBE:-0}" = 1 ]; then
		modprobe ipoib_cm "$@"
	else
		insmod "$MODDIR/ipoib_cm.ko" "$@"
	fi
}

# rmmod, and where it waits: every 10 s it is still running, the kernel
# stacks of rmmod and of every task in uninterruptible sleep.
# Sets RMMOD_SECS to how long rmmod ran, process start included.
unload_module() {
	local pid start=$EPOCHREALTIME next=10 rc=0

	if [ "${IPOIB_CM_MODPROBE:-0}" = 1 ]; then
		modprobe -r ipoib_cm &
	else
		rmmod ipoib_cm &
	fi
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		[ "$(secs_since "$start")" -ge $next ] &&
			kill -0 "$pid" 2>/dev/null || continue
		say "rmmod still running after ${next}s"
		blocked_stacks "$pid"
		next=$((next + 10))
	done
	wait "$pid" || rc=$?
	RMMOD_SECS=$(secs_since "$start")
	return $rc
}

# Whole seconds since an $EPOCHREALTIME value.
secs_since() {
	local now=$EPOCHREALTIME

	echo $(((${now/./} - ${1/./}) / 1000000))
}

# The kernel stacks of task PID and of every task in state D.
# One grep over every task's status: a fork per task took minutes with
# the bench's thousand interfaces (three workqueue rescuers each).
blocked_stacks() {
	local f p

	for f in "/proc/$1/status" $({ grep -ls '^State:.D' /proc/[0-9]*/status || true; } |
				      { grep -vx "/proc/$1/status" || true; }); do
		p=${f%/status}
		echo "-- ${p#/proc/} $(cat "$p/comm" 2>/dev/null)"
		cat "$p/stack" 2>/dev/null || true
	done
}

# Count kernel-log lines matching an extended regular expression.
klog_count() {
	dmesg | grep -cE -- "$1" || true
}

# The IPoIB interface on an RDMA device (after the module is loaded):
# ethtool's bus-info names the device when it has no bus of its own (rxe).
ipoib_if_of() {
	local rdev=$1 d

	for d in /sys/class/net/*; do
		[ -e "$d/mode" ] || continue
		if ethtool -i "${d##*/}" 2>/dev/null |
		   matches -x "bus-info: $rdev"; then
			echo "${d##*/}"
			return 0
		fi
	done
	return 1
}

# Run a shell command in /sys/class/net of a network namespace (`ip netns
# exec` mounts a sysfs that shows that namespace's devices).
ns_sysfs() {
	ip netns exec "$1" sh -c "cd /sys/class/net && $2"
}

# set_mode NS IFACE datagram|connected, as an administrator would.  An
# interface napi_release left threaded (HOLD_UNTHREAD) is made unthreaded
# once connected mode runs on it again.
set_mode() {
	ns_sysfs "$1" "echo $3 > $2/mode" || return
	if [ "$3" = connected ] && [ "${HOLD_UNTHREAD:-}" = "$1 $2" ]; then
		ns_sysfs "$1" "echo 0 > $2/threaded" || return
		HOLD_UNTHREAD=
	fi
}

get_mode() {
	ip netns exec "$1" cat "/sys/class/net/$2/mode"
}

# The debugfs directory of the interface on an RDMA device's port 1.
cm_debugfs() {
	echo "/sys/kernel/debug/ipoib_cm/$1-1"
}

# A connected-mode counter: cm_stat RDMADEV NAME
cm_stat() {
	awk -v n="$2" '$1 == n { print $2 }' "$(cm_debugfs "$1")/stats"
}

# Every interface's connections and counters (for failures).
cm_dump() {
	local d

	for d in /sys/kernel/debug/ipoib_cm/*/; do
		[ -d "$d" ] || continue
		echo "== $d"
		cat "$d/connections" "$d/stats" 2>/dev/null | grep -v ' 0$' || true
	done
}

# The state that explains a lost packet between hosts 0 and 1: neighbours,
# links, the veths' addresses (rxe's RoCE packets need them), the ports,
# the module's non-zero counters.
port_state() {
	local ns

	for ns in ns0 ns1; do
		echo "== $ns"
		ip -n "$ns" neigh show || true
		ip -n "$ns" -s link show || true
	done
	ip -6 addr show dev veth0 || true
	ip -6 addr show dev veth1 || true
	rdma link show || true
	cm_dump
	dmesg | tail -n 20
}

# Connections of an RDMA device's interface, one per line.
cm_conns() {
	grep -v '^#' "$(cm_debugfs "$1")/connections" || true
}

# Host I: the interface on rxe$I moved to namespace ns$I, with 192.0.2.(I+1)
# and 2001:db8::(I+1), up; its name is left in $IB<I>.
host_up() {
	local i=$1 ifname

	ifname=$(ipoib_if_of rxe$i) || fail "no interface on rxe$i"
	ip netns add ns$i
	ip netns exec ns$i sysctl -qw net.ipv6.conf.all.accept_dad=0 \
		net.ipv6.conf.default.accept_dad=0 \
		net.ipv4.icmp_echo_ignore_broadcasts=0
	ip link set "$ifname" netns ns$i
	ip -n ns$i link set lo up
	ip -n ns$i addr add 192.0.2.$((i + 1))/24 dev "$ifname"
	ip -n ns$i addr add 2001:db8::$((i + 1))/64 dev "$ifname" nodad
	ip -n ns$i link set "$ifname" up
	printf -v "IB$i" %s "$ifname"
}

# Wait for the carrier of host I.
host_wait() {
	local ifname=IB$1

	wait_for 60 "carrier on ${!ifname}" carrier_up ns$1 "${!ifname}"
}

# Two hosts: IB0 (on rxe0) in namespace ns0 with 192.0.2.1 and 2001:db8::1,
# IB1 (on rxe1) in ns1 with 192.0.2.2 and 2001:db8::2.
hosts_up() {
	host_up 0
	host_up 1
	host_wait 0
	host_wait 1
	say "hosts up: $IB0 in ns0, $IB1 in ns1"
}

# link_addr NS DEV: DEV's link address, as ip prints it.  (awk, not
# python: under TCG and KASAN a python start costs a second or more.)
link_addr() {
	ip -n "$1" -o link show dev "$2" |
		awk '{ for (i = 1; i < NF; i++) if ($i ~ /^link\//) { print $(i + 1); exit } }'
}

# Hosts 0 and 1 know each other's link address already (no ARP): the
# first packet of either side dials a connection.
static_neighbours() {
	local a0 a1
	a0=$(link_addr ns0 "$IB0")
	a1=$(link_addr ns1 "$IB1")
	in0 ip neigh replace 192.0.2.2 lladdr "$a1" dev "$IB0" nud permanent
	in1 ip neigh replace 192.0.2.1 lladdr "$a0" dev "$IB1" nud permanent
}

# path_ready NS IFACE ADDR PEERNS: NS resolves its path to ADDR (which
# lives in PEERNS) without opening a connection: one UDP datagram goes
# over UD (the neighbour's RC flag cleared while it is sent) and the
# peer's socket must get it.  A burst that follows then meets a resolved
# path instead of queueing behind the lookup, whose queue holds only a few
# packets (drop_path_queue_full).
path_ready() {
	local ns=$1 dev=$2 addr=$3 peer=$4 ll rx

	ll=$(ip -n "$ns" neigh show "$addr" dev "$dev" |
		awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") { print $(i + 1); exit } }')
	[ -n "$ll" ] || fail "$ns: no neighbour entry for $addr"
	ip -n "$ns" neigh replace "$addr" lladdr "00${ll:2}" dev "$dev" nud permanent
	ip netns exec "$peer" python3 -S -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 7099))
s.settimeout(30)
s.recv(64)' "$addr" &
	rx=$!
	wait_udp "$peer" 7099
	ip netns exec "$ns" python3 -S -c '
import socket, sys
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"path", (sys.argv[1], 7099))' "$addr"
	wait $rx || fail "$ns: no datagram reached $addr over UD in 30 s"
	ip -n "$ns" neigh replace "$addr" lladdr "$ll" dev "$dev" nud permanent
}

# Remove the hosts' namespaces (their interfaces go back to init_net).
hosts_down() {
	local ns

	for ns in $(ip netns list | awk '{print $1}'); do
		ip netns del "$ns"
	done
}

# A fabric of N rxe devices on one bridge: rxe<I> on veth rv<I>, whose
# peer bp<I> is a port of br0 (all MTU 9000).  Hosts as with host_up.
fabric_bridge() {
	local n=$1 i

	sysctl -qw net.ipv4.conf.all.accept_local=1
	sysctl -qw net.ipv4.conf.all.rp_filter=0
	sysctl -qw net.ipv4.conf.default.rp_filter=0
	sysctl -qw net.ipv6.conf.default.accept_dad=0
	ip link add br0 mtu 9000 type bridge
	ip link set br0 up
	for ((i = 0; i < n; i++)); do
		ip link add rv$i mtu 9000 type veth peer name bp$i mtu 9000
		ip link set bp$i master br0
		ip link set bp$i up
		ip link set rv$i up
		rdma link add rxe$i type rxe netdev rv$i
	done
	for ((i = 0; i < n; i++)); do
		wait_for 60 "rxe$i active" rxe_active rxe$i
	done
	say "fabric up: $n rxe devices on br0"
}

carrier_up() {
	ip -n "$1" -o link show "$2" | matches 'LOWER_UP'
}

carrier_down() {
	! carrier_up "$@"
}

link_mtu() {
	ip -n "$1" -o link show "$2" | sed 's/.* mtu \([0-9]*\).*/\1/'
}

# Wait until a TCP server listens on PORT in namespace NS (a server
# started in the background may take seconds to get there under TCG).
wait_listening() {
	wait_for 60 "a TCP listener on port $2 in $1" bound "$1" t "$2"
}

# bound NS t|u PORT: a TCP listener (t) or UDP socket (u) has PORT in NS.
# One process per poll: under TCG and KASAN each start costs about half a
# second, and the loops that call this run while the traffic waits.
bound() {
	local out

	out=$(ip netns exec "$1" ss -Hl"$2"n "sport = :$3") && [ -n "$out" ]
}

in0() { ip netns exec ns0 "$@"; }
in1() { ip netns exec ns1 "$@"; }
in2() { ip netns exec ns2 "$@"; }

# The byte counters of hosts 0 and 1: "TX0 RX0 TX1 RX1", from sysfs (no
# interpreter: this may run under load).
link_bytes() {
	echo $(ns_sysfs ns0 "cat $IB0/statistics/tx_bytes $IB0/statistics/rx_bytes") \
		$(ns_sysfs ns1 "cat $IB1/statistics/tx_bytes $IB1/statistics/rx_bytes")
}

# Neither link of hosts 0 and 1 sent or received anything for 0.5 s.
links_quiet() {
	local a

	a=$(link_bytes)
	sleep 0.5
	[ "$(link_bytes)" = "$a" ]
}

# rx_bytes NS IFACE: what IFACE has received, from sysfs.
rx_bytes() {
	link_stat "$1" "$2" rx bytes
}

# wait_rx SECS BYTES NS:IFACE...: traffic is seen to flow: each IFACE
# (in namespace NS) receives BYTES more than it had when this was called,
# within SECS; on timeout, the links and their counters.
wait_rx() {
	local secs=$1 bytes=$2 i want=()
	shift 2

	for i in "$@"; do
		want+=("$i:$(($(rx_bytes "${i%%:*}" "${i#*:}") + bytes))")
	done
	wait_explain "$secs" "$bytes bytes more received on each of $*" \
		"show_links $*; cm_dump" rx_reached "${want[@]}"
}

# show_links NS:IFACE...: the links with their counters.
show_links() {
	local i

	for i in "$@"; do
		ip -n "${i%%:*}" -s link show "${i#*:}" || true
	done
}

# rx_reached NS:IFACE:BYTES...: each IFACE has received BYTES.
rx_reached() {
	local i ns rest

	for i in "$@"; do
		ns=${i%%:*}
		rest=${i#*:}
		[ "$(rx_bytes "$ns" "${rest%%:*}")" -ge "${rest#*:}" ] || return 1
	done
}

# A link counter: link_stat NS IFACE rx|tx NAME reads
# /sys/class/net/IFACE/statistics/{rx,tx}_NAME (bytes, packets, dropped,
# length_errors, ...) as the namespace sees it: one process, where ip's
# JSON and a python to read it took two seconds.
link_stat() {
	ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3_$4"
}

# iperf3 TCP from ns0 to ns1 for $1 seconds (extra arguments go to the
# client).  The server must have received what the client sent, less at
# most what the two sockets still held when the client's timer ran out.  The
# link counters are shown: UD may drop (rxe and veth do under load), TCP
# recovers.
iperf_check() {
	local secs=$1
	shift
	local tx0 rx0 tx1 rx1
	tx0=$(link_stat ns0 "$IB0" tx bytes)
	rx0=$(link_stat ns0 "$IB0" rx bytes)
	tx1=$(link_stat ns1 "$IB1" tx bytes)
	rx1=$(link_stat ns1 "$IB1" rx bytes)
	# A stalled transfer must end the test, with the state to debug it.
	in1 timeout $((secs * 4 + 180)) iperf3 -s -1 -J > /tmp/iperf-server.json 2>&1 &
	local spid=$!
	wait_listening ns1 5201
	in0 timeout $((secs * 4 + 120)) iperf3 -c 192.0.2.2 -t "$secs" -J "$@" \
		> /tmp/iperf-client.json ||
		{ tail -n 20 /tmp/iperf-client.json; cm_dump; fail "iperf3 client failed"; }
	wait $spid || { tail -n 20 /tmp/iperf-server.json; fail "iperf3 server failed"; }
	cp /tmp/iperf-client.json /tmp/iperf-server.json "$VMOUT/" 2>/dev/null || true
	# The counters below include the last packets of the test: both
	# links quiet for half a second.
	wait_explain 30 "the links quiet after iperf3" \
		'say "byte counters (tx rx, $IB0 then $IB1): $(link_bytes)"' links_quiet
	tx0=$(($(link_stat ns0 "$IB0" tx bytes) - tx0))
	rx0=$(($(link_stat ns0 "$IB0" rx bytes) - rx0))
	tx1=$(($(link_stat ns1 "$IB1" tx bytes) - tx1))
	rx1=$(($(link_stat ns1 "$IB1" rx bytes) - rx1))
	say "link bytes: $IB0 sent $tx0, $IB1 received $rx1; $IB1 sent $tx1, $IB0 received $rx0"
	# Bytes the client wrote but the server had not read when the test
	# ended can only be in the two sockets: at most the sender's tcp_wmem
	# and the receiver's tcp_rmem maxima.
	local slack
	slack=$(($(in0 sysctl -n net.ipv4.tcp_wmem | awk '{print $3}') +
		 $(in1 sysctl -n net.ipv4.tcp_rmem | awk '{print $3}')))
	python3 -S - /tmp/iperf-client.json /tmp/iperf-server.json "$slack" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["end"]
s = json.load(open(sys.argv[2]))["end"]
slack = int(sys.argv[3])
sent = c["sum_sent"]["bytes"]
got = s["sum_received"]["bytes"]
print(f"iperf3: client sent {sent} bytes, server received {got} bytes "
      f"(socket buffers hold at most {slack}), "
      f"{c['sum_received']['bits_per_second'] / 1e6:.1f} Mbit/s, "
      f"{c['sum_sent'].get('retransmits', 0)} retransmits")
sys.exit(0 if 0 < got <= sent and sent - got <= slack else 1)
PY
}

# tcp_digest_check MIB [FROM TO ADDR]: send MIB MiB of random data over
# one TCP connection from namespace FROM to a server in TO at ADDR (ns0,
# ns1, 2001:db8::2 by default) and compare length and SHA-256: every byte
# arrives, unchanged.
tcp_digest_check() {
	local mib=$1 from=${2:-ns0} to=${3:-ns1} addr=${4:-2001:db8::2}
	local ready=/tmp/digest.ready rfd line

	# The server says when it listens, through a FIFO held open here
	# (so neither side's open waits): polling for the listener would
	# start a process every fifth of a second, on the CPUs the server
	# needs to start.
	[ -p $ready ] || mkfifo $ready
	exec {rfd}<> $ready
	ip netns exec "$to" python3 -S - $ready > /tmp/digest.rx <<'PY' &
import hashlib, socket, sys
srv = socket.socket(socket.AF_INET6)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("::", 5001))
srv.listen(1)
with open(sys.argv[1], "w") as ready:
    ready.write("listening\n")
srv.settimeout(120)
conn, _ = srv.accept()
conn.settimeout(120)
h, n = hashlib.sha256(), 0
while True:
    b = conn.recv(1 << 16)
    if not b:
        break
    h.update(b)
    n += len(b)
print(n, h.hexdigest())
PY
	local rpid=$!
	if ! read -r -t 60 -u $rfd line; then
		exec {rfd}<&-
		fail "the digest server in $to did not listen within 60 s"
	fi
	exec {rfd}<&-
	ip netns exec "$from" python3 -S - "$mib" "$addr" > /tmp/digest.tx <<'PY'
import hashlib, os, socket, sys
data = os.urandom(int(sys.argv[1]) << 20)
s = socket.create_connection((sys.argv[2], 5001), timeout=120)
s.sendall(data)
s.close()
print(len(data), hashlib.sha256(data).hexdigest())
PY
	wait $rpid || return 1
	local tx rx
	tx=$(< /tmp/digest.tx)
	rx=$(< /tmp/digest.rx)
	say "tcp digest $from -> $to: sent $tx, received $rx"
	[ -n "$tx" ] && [ "$tx" = "$rx" ]
}

# Wait until a UDP socket is bound to PORT in namespace NS.
wait_udp() {
	wait_for 60 "a UDP socket on port $2 in $1" bound "$1" u "$2"
}

# Two-VM fabric (scripts/vm-pair.sh): rxe0 on this VM's virtio NIC (MTU
# 9000).  VM_ROLE (0 or 1) picks this end's addresses: 192.0.2.(ROLE+1),
# 2001:db8::(ROLE+1); PEER4 and PEER6 are the other end's.
fabric_pair() {
	ROLE=${VM_ROLE:?VM_ROLE is not set}
	PEER4=192.0.2.$((2 - ROLE))
	PEER6=2001:db8::$((2 - ROLE))
	sysctl -qw net.ipv6.conf.default.accept_dad=0
	sysctl -qw net.ipv6.conf.eth0.accept_dad=0
	ip link set eth0 mtu 9000 up
	rdma link add rxe0 type rxe netdev eth0
	wait_for 60 "rxe0 active" rxe_active rxe0
	say "fabric up: rxe0 on eth0 (role $ROLE)"
}

# Our IPoIB interface in the pair fixture, addressed and up.
pair_host_up() {
	sysctl -qw net.ipv4.icmp_echo_ignore_broadcasts=0
	IB=$(ipoib_if_of rxe0) || fail "no interface on rxe0"
	ip addr add 192.0.2.$((ROLE + 1))/24 dev "$IB"
	ip addr add 2001:db8::$((ROLE + 1))/64 dev "$IB" nodad
	ip link set "$IB" up
	wait_for 60 "carrier on $IB" carrier_up_here "$IB"
}

carrier_up_here() {
	ip -o link show "$1" | matches 'LOWER_UP'
}

# Faults on the wire.  rxe sends RoCEv2 over IPv6 (GID index 0): a CM MAD
# is UDP to port 4791 (octets 42-43 of the IPv6 packet), then BTH (12
# octets), DETH (8) and the MAD header, whose management class (0x07 for
# the CM) is octet 69 and attribute ID octets 84-85 (REQ 0x0010, REP
# 0x0013, RTU 0x0014).

# The faults sit in a prio qdisc at DEV's root: a packet its filter drops
# or its netem holds was, for the sender, sent.  (A drop at the clsact hook
# is reported to the sender, and rxe moves a QP whose send fails to ERR:
# for QP1 that ends every later MAD of the device.)  The root qdisc is
# made once, before traffic (wire_root), and never removed.
wire_root() {
	tc qdisc show dev "$1" root | matches 'prio 1:' ||
		tc qdisc replace dev "$1" root handle 1: prio
}

# cm_drop DEV ATTR: lose every CM MAD with attribute ATTR that DEV sends.
cm_drop() {
	wire_root "$1"
	tc filter add dev "$1" parent 1: protocol ipv6 prio 1 u32 \
		match ip6 protocol 17 0xff \
		match u16 4791 0xffff at 42 \
		match u8 0x07 0xff at 69 \
		match u16 "$2" 0xffff at 84 \
		action drop
}

# How many packets the cm_drop filter on DEV dropped.
cm_dropped() {
	tc -s filter show dev "$1" parent 1: |
		sed -n 's/.*Sent [0-9]* bytes \([0-9]*\) pkt.*/\1/p' | sed -n 1p
}

# wire_delay DEV MS: everything else DEV sends waits MS milliseconds;
# wire_undelay DEV ends that (what netem still holds is lost).
wire_delay() {
	local band

	wire_root "$1"
	for band in 1 2 3; do
		tc qdisc replace dev "$1" parent 1:$band handle $((band + 10)): \
			netem delay "$2"ms limit 100000
	done
}

wire_undelay() {
	local band

	for band in 1 2 3; do
		tc qdisc del dev "$1" parent 1:$band handle $((band + 10)): \
			2>/dev/null || true
	done
}

# A packet refused by the network stack (NET_XMIT_DROP), which makes rxe
# move the sending QP to ERR.  wire_refusing_root DEV, before any traffic
# (making a root qdisc later would refuse what is sent meanwhile): a root
# prio qdisc whose fourth band holds nothing (pfifo limit 0) and gets only
# what a filter sends there.  wire_refuse DEV VALUE MASK: DEV's RoCE
# packets (UDP 4791) whose BTH opcode matches go there, until wire_clear.
wire_refusing_root() {
	tc qdisc replace dev "$1" root handle 1: prio bands 4 \
		priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1
	tc qdisc add dev "$1" parent 1:4 handle 14: pfifo limit 0
}

wire_refuse() {
	tc filter add dev "$1" parent 1: protocol ipv6 prio 1 u32 \
		match ip6 protocol 17 0xff match u16 4791 0xffff at 42 \
		match u8 "$2" "$3" at 48 flowid 1:4
}

# wire_clear DEV: no filter and no delay left on DEV.  The root qdisc
# stays: deleting or replacing a device's root qdisc refuses what is sent
# meanwhile (NET_XMIT_DROP), and a QP whose packet is refused goes to ERR.
# A child qdisc or a filter changes under the qdisc's lock, refusing
# nothing.
wire_clear() {
	tc filter del dev "$1" parent 1: 2>/dev/null || true
	wire_undelay "$1"
}

# The reaper asleep in ib_destroy_cm_id(), waiting for a callback on the
# id to return (a mode switch destroys its listening ids too: those are
# not the reaper's).  ib_destroy_cm_id() tail-calls cm_destroy_id(), which
# is what a stack shows.
destroy_waiting() {
	local f st

	for f in $(grep -ls '^State:.D' /proc/[0-9]*/status 2>/dev/null); do
		st=$(cat "${f%/status}/stack" 2>/dev/null) || continue
		[[ "$st" == *cm_destroy_id* || "$st" == *ib_destroy_cm_id* ]] &&
			[[ "$st" == *ipoib_cm_reap_work* ]] && return 0
	done
	return 1
}

# reaper_stack: the kernel stack of a reap (ipoib_cm_reap_work) asleep
# in uninterruptible sleep, as its functions, innermost first; fails if
# there is none.
reaper_stack() {
	local f st

	for f in $(grep -ls '^State:.D' /proc/[0-9]*/status 2>/dev/null); do
		st=$(cat "${f%/status}/stack" 2>/dev/null) || continue
		[[ "$st" == *ipoib_cm_reap_work* ]] || continue
		echo "$st" | awk '{ sub(/\+.*/, "", $2); print $2 }'
		return 0
	done
	return 1
}

# hold_caught: cm_hold has caught a call and not let it go yet.
hold_caught() {
	[ "$(< /sys/module/cm_hold/parameters/held)" = 1 ] &&
		[ "$(< /sys/module/cm_hold/parameters/released)" = 0 ]
}

# hold_release_when MSG COND...: with a call held by cm_hold, poll COND
# for up to 6 s (the tool lets go by itself after 8); once it succeeds
# with the call still held, say MSG and let the call go on.  Said before:
# a driver that then crashes leaves that line last.  Fails, the call
# still held (for the caller to show what it waits on), if COND never
# succeeded while it was.
hold_release_when() {
	local msg=$1 end=$((SECONDS + 6))

	shift
	while hold_caught && [ $SECONDS -lt $end ]; do
		if "$@" && hold_caught; then
			say "$msg"
			echo 1 > /sys/module/cm_hold/parameters/release
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# release_when_destroy_waits WHAT DEV: the call cm_hold holds (WHAT
# names it) goes on once DEV's reaper is seen asleep in
# ib_destroy_cm_id() with it still held: held all along.  Else the
# precondition failed: the blocked tasks are shown, the call let go, and
# the run fails.
release_when_destroy_waits() {
	hold_release_when "$1 held: $2's reaper waits in ib_destroy_cm_id(); letting the callback go" \
		destroy_waiting && return 0
	blocked_stacks $$
	say "FAIL: precondition: the reaper did not wait in ib_destroy_cm_id() while the $1 callback was held"
	echo 1 > /sys/module/cm_hold/parameters/release
	exit 1
}

# switch_writer NS DEV MODE: a writer of MODE to DEV's mode, started now
# in NS and waiting; switch_go lets it write (its pid: $SWITCH_PID).
# While cm_hold holds a callback, its CPU runs with preemption off and no
# RCU grace period ends: `ip netns exec`, which waits for one, must have
# run before.
switch_writer() {
	rm -f /tmp/switch.go /tmp/switch.ready
	mkfifo /tmp/switch.go
	ip netns exec "$1" sh -c "cd /sys/class/net && : > /tmp/switch.ready &&
		read x < /tmp/switch.go && echo $3 > $2/mode" &
	SWITCH_PID=$!
	wait_for 60 "the mode switch's writer in $1" test -e /tmp/switch.ready
}

switch_go() {
	echo go > /tmp/switch.go
}

# The IB CM's own counters in the port's sysfs directory:
# cm_msgs RDMADEV rx|tx NAME (req, rep, rtu, rej, ...) counts messages,
# cm_retries RDMADEV NAME the ones it sent again.
cm_msgs() {
	cat "/sys/class/infiniband/$1/ports/1/cm_$2_msgs/$3"
}

cm_retries() {
	cat "/sys/class/infiniband/$1/ports/1/cm_tx_retries/$2"
}

# An rxe counter (rdma statistic): rxe_stat RDMADEV NAME.
rxe_stat() {
	rdma statistic show link "$1/1" |
		tr ' ' '\n' | awk -v n="$2" 'found == 1 { print; found = 2 } $0 == n && !found { found = 1 }'
}

# Every RC queue pair found retransmission exhausted and RNR exhaustion
# nowhere: with RNR retry 7 rxe retries forever, so a missing receive
# shows only in its counters (NAKs are reported, not judged).  Counted
# from the device's creation, or from rxe_baseline.  One rdma process per
# device, the rest in the shell: under load each process start takes
# seconds.
declare -A RXE_BASE=()
rxe_clean() {
	local d st ex rnr

	for d in "$@"; do
		st=$(rdma statistic show link "$d/1")
		ex=$(word_after "$st" retry_exceeded_err)
		rnr=$(word_after "$st" retry_rnr_exceeded_err)
		say "$d: retry_exceeded_err ${ex:-?} retry_rnr_exceeded_err ${rnr:-?}" \
			"rcvd_rnr_err $(word_after "$st" rcvd_rnr_err)" \
			"send_rnr_err $(word_after "$st" send_rnr_err)" \
			"(before: ${RXE_BASE[$d]:-0 0})"
		[ -n "$ex" ] && [ -n "$rnr" ] &&
			[ "$ex $rnr" = "${RXE_BASE[$d]:-0 0}" ] ||
			fail "$d: RC retries exhausted (retry ${ex:-?}, RNR ${rnr:-?}; before: ${RXE_BASE[$d]:-0 0})"
	done
}

# rxe_baseline RDMADEV...: rxe_clean counts from now on.  For a scenario
# whose own fault may exhaust retries legitimately (a QP destroyed under
# its peer's traffic), once the QPs of that fault are gone; a device made
# again (rdma link add) starts from 0, and needs rxe_baseline again.
rxe_baseline() {
	local d st

	for d in "$@"; do
		st=$(rdma statistic show link "$d/1")
		RXE_BASE[$d]="$(word_after "$st" retry_exceeded_err) $(word_after "$st" retry_rnr_exceeded_err)"
	done
}

# word_after TEXT WORD: the word after the first WORD in TEXT.
word_after() {
	local w prev=

	for w in $1; do
		[ "$prev" != "$2" ] || { echo "$w"; return 0; }
		prev=$w
	done
}

# napi_hold NS IFACE: keep IFACE's NAPI from running, from outside the
# driver, until napi_release.  The interface's NAPI is made to run in
# kernel threads (sysfs "threaded"), those threads are pinned to CPU 1 and
# made SCHED_FIFO 1 (a fair-class thread would still get the share 6.12's
# fair server reserves), and a SCHED_FIFO 10 busy loop runs there with RT
# throttling off.  This shell (and what it starts from now on) and every
# unbound kernel worker (rxe's among them) are kept on CPU 0, so only the
# NAPI stops.  CPU 1's softirqs must go on: once the kernel has deferred
# them to ksoftirqd/1, a thread below the loop would never run them, and
# with them would stop the timers rxe retransmits by (seen: a flow
# stopped dead, no receive in 12 s) and RCU's grace periods; so
# ksoftirqd/1 runs above the loop.  Every teardown wait is bounded (5 s):
# release before that.
napi_hold() {
	local p

	[ "$(nproc --all)" -ge 2 ] || fail "holding a NAPI needs a second CPU"
	HOLD_NS=$1
	HOLD_IF=$2
	ns_sysfs "$1" "echo 1 > $2/threaded"
	HOLD_PIDS=$(pgrep "^napi/$2-" || true)
	[ -n "$HOLD_PIDS" ] || fail "no NAPI threads for $2"
	for p in $HOLD_PIDS; do
		taskset -p -c 1 "$p" > /dev/null
		chrt -f -p 1 "$p"
	done
	taskset -p -c 0 $$ > /dev/null
	HOLD_WQMASK=$(cat /sys/devices/virtual/workqueue/cpumask)
	echo 1 > /sys/devices/virtual/workqueue/cpumask
	HOLD_SIRQ=$(pgrep -x ksoftirqd/1)
	chrt -f -p 20 "$HOLD_SIRQ"
	# Work already running on CPU 1 (an rxe QP's task, say) ends first:
	# held there, it would stop the traffic, not just the NAPI.
	sleep 1
	HOLD_RT=$(cat /proc/sys/kernel/sched_rt_runtime_us)
	echo -1 > /proc/sys/kernel/sched_rt_runtime_us
	taskset -c 1 chrt -f 10 sh -c 'while :; do :; done' &
	HOLD_HOG=$!
	sleep 0.2
}

# napi_resume: the held NAPI runs again, at once; napi_release then undoes
# the rest of napi_hold's settings.  Both are safe to call twice, and from
# a failure path.
napi_resume() {
	[ -n "${HOLD_HOG:-}" ] || return 0
	kill "$HOLD_HOG"
	wait "$HOLD_HOG" 2>/dev/null || true
	HOLD_HOG=
}

# napi_release turns "threaded" off again only while connected mode runs
# on the interface (mode connected, interface up).  Since 689883de94dd
# ("net: stop napi kthreads when THREADED napi is disabled", not in 6.12)
# turning it off waits until each of the interface's NAPIs is idle or
# owned by its thread; one that napi_disable() owns is neither, and 7.2
# waits for ever (seen: the write stuck in napi_set_threaded() after a
# switch to datagram mode).  The connected-mode NAPI is disabled outside
# connected mode, so there the interface stays threaded, its NAPI threads
# unpinned and back in the fair class, until set_mode next starts
# connected mode on it (HOLD_UNTHREAD).
napi_release() {
	local p all=0-$(($(nproc --all) - 1))

	napi_resume
	[ -n "${HOLD_NS:-}" ] || return 0
	echo "$HOLD_RT" > /proc/sys/kernel/sched_rt_runtime_us
	echo "$HOLD_WQMASK" > /sys/devices/virtual/workqueue/cpumask
	chrt -o -p 0 "$HOLD_SIRQ"
	taskset -p -c "$all" $$ > /dev/null
	for p in $HOLD_PIDS; do
		chrt -o -p 0 "$p"
		taskset -p -c "$all" "$p" > /dev/null
	done
	if [ "$(get_mode "$HOLD_NS" "$HOLD_IF")" = connected ] &&
	   (($(ns_sysfs "$HOLD_NS" "cat $HOLD_IF/flags") & 1)); then
		ns_sysfs "$HOLD_NS" "echo 0 > $HOLD_IF/threaded"
	else
		HOLD_UNTHREAD="$HOLD_NS $HOLD_IF"
	fi
	HOLD_NS=
}

# A connection's column from debugfs: conn_col RDMADEV DIR STATE COLUMN
# (1-based, as in the connections file's header); the first match.
conn_col() {
	cm_conns "$1" | awk -v d="$2" -v s="$3" -v c="$4" \
		'$3 == d && (s == "*" || $4 == s) { print $c; exit }'
}

# udp_flood NS DEST N: N datagrams of 1000 octets to DEST's discard port
# (nothing listens: each still takes a receive on the RC QP).
udp_flood() {
	ip netns exec "$1" python3 -S - "$2" "$3" <<'PY'
import socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 32, 1 << 23)  # SO_SNDBUFFORCE
for _ in range(int(sys.argv[2])):
    s.sendto(b"x" * 1000, (sys.argv[1], 9))
PY
}

# Numbered UDP datagrams: udp_burst_rx NS ADDR PORT N OUT waits (in the
# background) for N datagrams and writes their numbers in arrival order to
# OUT; udp_burst_tx NS ADDR PORT N [FILE REGEX] sends 0 .. N-1, once a line
# of FILE matches REGEX if they are given, UDP_BURST_GAP seconds apart
# (default 0).  With UDP_BURST_READY=PATH it creates PATH once it is
# watching FILE: starting an interpreter can take seconds under TCG.  The
# receiver gives up after UDP_BURST_TIMEOUT seconds (default 60) without
# a datagram.
udp_burst_rx() {
	ip netns exec "$1" python3 -S - "$2" "$3" "$4" "${UDP_BURST_TIMEOUT:-60}" > "$5" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 33, 1 << 23)  # SO_RCVBUFFORCE
s.bind((sys.argv[1], int(sys.argv[2])))
s.settimeout(float(sys.argv[4]))
for _ in range(int(sys.argv[3])):
    try:
        print(int(s.recv(2048).split(b" ")[1]), flush=True)
    except socket.timeout:
        break
PY
}

udp_burst_tx() {
	local watch=/dev/null

	# FILE is opened here: `ip netns exec` mounts a sysfs without debugfs.
	[ -z "${5:-}" ] || watch=$5
	ip netns exec "$1" python3 -S - "$2" "$3" "$4" "${6:-}" 3< "$watch" <<'PY'
import os, re, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
# Held packets count against the socket until they are sent: room for all.
s.setsockopt(socket.SOL_SOCKET, 32, 1 << 23)  # SO_SNDBUFFORCE

def text():
    os.lseek(3, 0, os.SEEK_SET)
    return os.read(3, 1 << 20).decode()

if os.environ.get("UDP_BURST_READY"):
    open(os.environ["UDP_BURST_READY"], "w").close()
if sys.argv[4]:
    # Wait (60 s at most) for a line of the file to match.
    end = time.monotonic() + 60
    while not re.search(sys.argv[4], text(), re.M):
        if time.monotonic() > end:
            sys.exit("udp_burst_tx: never matched %r in:\n%s" % (sys.argv[4], text()))
        time.sleep(0.02)
gap = float(os.environ.get("UDP_BURST_GAP", "0"))
for i in range(int(sys.argv[3])):
    s.sendto(b"seq %d " % i + b"x" * 1000, (sys.argv[1], int(sys.argv[2])))
    if gap:
        time.sleep(gap)
PY
}

# srq_check RDMADEV srq|none: every RC QP of the device in RTR or RTS (a
# connection's; the drain QP stays in ERR) is attached to an SRQ of the
# device (srq), or none is (none), as the RDMA core's resource tracking
# sees it.  Fails if there is no such QP at all.
srq_check() {
	local qps srqs

	qps=$(rdma -j res show qp link "$1/1")
	srqs=$(rdma -j res show srq dev "$1" 2>/dev/null) || srqs='[]'
	python3 -S - "$1" "$2" "$qps" "${srqs:-[]}" <<'PY'
import json, sys
dev, want = sys.argv[1], sys.argv[2]
qps, srqs = json.loads(sys.argv[3]), json.loads(sys.argv[4])
live = sorted(q["lqpn"] for q in qps
              if q.get("type") == "RC" and q.get("state") in ("RTR", "RTS"))
att = set()
for s in srqs:
    for r in s.get("lqpn", []):
        a, _, b = str(r).partition("-")
        att.update(range(int(a), int(b or a) + 1))
print(f"{dev}: RC QPs in RTR/RTS {live}, on an SRQ {sorted(att)}")
if not live:
    sys.exit(f"{dev}: no RC QP in RTR or RTS")
bad = [q for q in live if (q in att) != (want == "srq")]
if bad:
    sys.exit(f"{dev}: RC QPs {bad} " +
             ("not on the SRQ" if want == "srq" else "on an SRQ"))
PY
}

# Every IPoIB interface (link type infiniband) in every namespace, one
# "NAMESPACE/NAME" per line (init_net as "-"), wherever scenarios put them.
ipoib_ifaces() {
	local ns

	# ip and awk only: this runs under load, where starting an interpreter
	# in the guest can take many seconds.
	for ns in - $(ip netns list | awk '{print $1}'); do
		if [ "$ns" = - ]; then ip -o link show; else ip -n "$ns" -o link show; fi |
			awk -v ns="$ns" '/ link\/infiniband / {
				sub(/:$/, "", $2); sub(/@.*/, "", $2); print ns "/" $2 }'
	done
}

# closing_judged WHAT LINES: the kernel's "connected mode stopped: N
# connections closed in T ms" reports after the log's first LINES lines
# (dmesg | wc -l before the teardown): at least one, each within 10 s.
closing_judged() {
	local what=$1 ms t

	ms=$(dmesg | tail -n +$(($2 + 1)) |
	     sed -n 's/.*connected mode stopped: .* in \([0-9]*\) ms/\1/p')
	say "$what: connections closed in ${ms//$'\n'/, } ms"
	[ -n "$ms" ] || fail "$what: connected mode did not stop"
	for t in $ms; do
		[ "$t" -le 10000 ] || fail "$what: closing took $t ms"
	done
}

# unload_checked: rmmod, after checking that there are interfaces to lose
# (the check below could not fail otherwise), then no IPoIB interface in
# any namespace and no debugfs directory of the module.
unload_checked() {
	local left

	[ -n "$(ipoib_ifaces)" ] || fail "no IPoIB interface before rmmod"
	unload_module || fail "rmmod failed"
	say "rmmod ran ${RMMOD_SECS}s"
	left=$(ipoib_ifaces)
	[ -z "$left" ] || fail "interfaces survived rmmod: $left"
	[ ! -e /sys/kernel/debug/ipoib_cm ] || fail "debugfs survived rmmod"
}
