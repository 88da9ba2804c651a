#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# First packets to many interfaces behind one GID.  Host 1's port has 15
# P_Key children besides its own interface, all sharing the port's GID,
# so host 0 reaches all 16 through one path.  With that path not resolved
# yet and its lookup held back (a SCHED_FIFO loop on CPU 1, the sender
# SCHED_FIFO on CPU 0), host 0 sends one UDP datagram to each
# of them: all 16 wait for the one resolution, then every one arrives (8
# wait per destination, not 8 for the whole path) and path_queue_full
# stays 0.  Host 0 sends nothing to host 1's GID before the burst (every
# neighbour static), so the path is new; the mutation path-queue-per-path
# shows the hold makes the 16 wait together.
. "$(dirname "$0")/../lib.sh"

N=15

fabric_single
load_module
hosts_up
# The children, each with an address of its own on 2001:db8:3::/64.
for ((i = 1; i <= N; i++)); do
	ip -n ns1 link add link "$IB1" name s$i type ipoib pkey 0xffff ||
		fail "ip link add s$i"
	ip -n ns1 addr add 2001:db8:3::$i/64 dev s$i nodad
	ip -n ns1 link set s$i up
done
ip -n ns1 addr add 2001:db8:3::100/64 dev "$IB1" nodad
for ((i = 1; i <= N; i++)); do
	wait_for 60 "carrier on s$i" carrier_up ns1 s$i
done

# Host 0 knows every link address (no neighbour discovery, which would
# resolve the path first) and has sent nothing to host 1's GID yet.
in0 ip addr add 2001:db8:3::200/64 dev "$IB0" nodad
in0 ip neigh replace 2001:db8:3::100 lladdr "$(link_addr ns1 "$IB1")" \
	dev "$IB0" nud permanent
for ((i = 1; i <= N; i++)); do
	in0 ip neigh replace 2001:db8:3::$i lladdr "$(link_addr ns1 s$i)" \
		dev "$IB0" nud permanent
done
[ "$(cm_stat rxe0 drop_path_queue_full)" = 0 ] || fail "drops before the burst"
before=$(cm_stat rxe0 drop_path_queue_full)

# This shell and what it starts stay on CPU 0 from here: the lookup is
# held on CPU 1 below, and nothing of the test may wait there.
[ "$(nproc --all)" -ge 2 ] || fail "holding the lookup needs a second CPU"
taskset -p -c 0 $$ > /dev/null

# One socket in ns1 takes every datagram (each arrives on its own
# interface); it prints the destinations it got.
ip netns exec ns1 python3 -S - "$N" > /tmp/path-share.rx <<'PY' &
import socket, sys
n = int(sys.argv[1]) + 1
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("::", 7000))
s.settimeout(120)
got = set()
try:
    while len(got) < n:
        got.add(s.recv(64).decode())
except socket.timeout:
    pass
print(" ".join(sorted(got, key=int)))
PY
rpid=$!
wait_udp ns1 7000
# Unbound workqueues (the path lookup runs on one) may only use CPU 1,
# where a SCHED_FIFO loop keeps them from running; this shell and the
# sender stay on CPU 0.  ksoftirqd/1 runs above the loop (timers).
wqmask=$(cat /sys/devices/virtual/workqueue/cpumask)
rt=$(cat /proc/sys/kernel/sched_rt_runtime_us)
sirq=$(pgrep -x ksoftirqd/1)
release() {
	[ -n "${hog:-}" ] || return 0
	kill "$hog"
	wait "$hog" 2>/dev/null || true
	hog=
	echo "$rt" > /proc/sys/kernel/sched_rt_runtime_us
	echo "$wqmask" > /sys/devices/virtual/workqueue/cpumask
	chrt -o -p 0 "$sirq"
	taskset -p -c 0-$(($(nproc --all) - 1)) $$ > /dev/null
}
echo 2 > /sys/devices/virtual/workqueue/cpumask
chrt -f -p 20 "$sirq"
echo -1 > /proc/sys/kernel/sched_rt_runtime_us
taskset -c 1 chrt -f 10 sh -c 'while :; do :; done' &
hog=$!
say "lookups held; sending 16 datagrams"
# The sender runs SCHED_FIFO on CPU 0, so the lookup's worker can run on
# neither CPU until the 16 datagrams are queued, even if its workqueue
# (an ordered one) does not follow the workqueue cpumask: with the mask
# alone the old module once lost 8 and once none.
taskset -c 0 chrt -f 5 ip netns exec ns0 python3 -S - "$N" <<'PY' || { release; fail "sending the burst"; }
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
for i in [100] + list(range(1, int(sys.argv[1]) + 1)):
    s.sendto(str(i).encode(), (f"2001:db8:3::{i}", 7000))
PY
release
say "sent; lookups released"
wait $rpid || true
got=$(cat /tmp/path-share.rx)
want="$(seq -s ' ' 1 $N) 100"
dropped=$(($(cm_stat rxe0 drop_path_queue_full) - before))
say "arrived: $got; path_queue_full $dropped"
[ "$dropped" = 0 ] || fail "$dropped first packets dropped behind the shared path"
[ "$got" = "$want" ] || fail "datagrams arrived for: $got (want $want)"
unload_checked
say "path-share: ok"
