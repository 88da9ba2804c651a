#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The RTR -> RTS window.  The side that dials holds its RTU back (debugfs
# rtu_delay_ms, the module's own RTU path), so the accepting side meets
# data while its QP is still in RTR:
#  - one connection both ways (cm_bidirectional=1): the accepting side's
#    answer is held on that connection, the first receive makes the CM
#    report COMM_EST, the QP reaches RTS and the answer goes out at once;
#    a TCP connect and echo, too;
#  - the default mode: the answer opens its own connection, promptly;
#  - both sides dialling at the same moment end with one connection, and
#    iperf3 runs both ways over it.
. "$(dirname "$0")/../lib.sh"

RTU_DELAY=5000

# ping once from ns0; print the round trip in ms.
first_ping_ms() {
	in0 ping -c 1 -W 4 192.0.2.2 | sed -n 's/.*time=\([0-9.]*\) ms/\1/p'
}

fabric_single
load_module default_mode=connected cm_bidirectional=1
hosts_up
static_neighbours
echo $RTU_DELAY > "$(cm_debugfs rxe0)/rtu_delay_ms"

ms=$(first_ping_ms) || true
cat "$(cm_debugfs rxe0)/connections" "$(cm_debugfs rxe1)/connections"
grep -E 'comm_est|held' "$(cm_debugfs rxe1)/stats"
[ -n "$ms" ] || fail "the first ping got no answer"
say "first ping over a new connection, RTU held ${RTU_DELAY} ms: ${ms} ms"
[ "$(echo "$ms < $RTU_DELAY / 2" | bc)" = 1 ] || fail "the answer waited for the RTU"
[ "$(cm_stat rxe1 comm_est)" -ge 1 ] || fail "COMM_EST path not taken"
[ "$(cm_stat rxe1 held_before_rts)" -ge 1 ] || fail "the answer was not held"
[ "$(cm_stat rxe1 held_flushed)" -ge 1 ] || fail "held packets not flushed"
[ "$(cm_stat rxe1 held_dropped)" = 0 ] || fail "held packets dropped"
[ "$(cm_conns rxe0 | wc -l)" = 1 ] && [ "$(cm_conns rxe1 | wc -l)" = 1 ] ||
	fail "more than one connection"

# TCP connect and echo over a fresh connection, RTU still held back.
unload_module
hosts_down
load_module default_mode=connected cm_bidirectional=1
hosts_up
static_neighbours
echo $RTU_DELAY > "$(cm_debugfs rxe0)/rtu_delay_ms"
in1 python3 -c '
import socket
s = socket.create_server(("192.0.2.2", 7007))
s.settimeout(20)
c, _ = s.accept()
c.sendall(c.recv(100))
' &
spid=$!
wait_listening ns1 7007
took=$(in0 python3 -c '
import socket, time
t = time.monotonic()
c = socket.create_connection(("192.0.2.2", 7007), timeout=10)
c.sendall(b"echo-me")
assert c.recv(100) == b"echo-me"
print(int((time.monotonic() - t) * 1000))
') || fail "TCP connect and echo failed"
wait $spid || fail "TCP echo server failed"
say "TCP connect and echo over a new connection: ${took} ms"
[ "$took" -lt $((RTU_DELAY / 2)) ] || fail "TCP waited for the RTU"
[ "$(cm_stat rxe1 comm_est)" -ge 1 ] || fail "COMM_EST path not taken (TCP)"
[ "$(cm_stat rxe1 held_dropped)" = 0 ] || fail "held packets dropped (TCP)"

# The default mode: the answer dials a connection of its own.
unload_module
hosts_down
load_module default_mode=connected
hosts_up
static_neighbours
echo $RTU_DELAY > "$(cm_debugfs rxe0)/rtu_delay_ms"
ms=$(first_ping_ms) || true
[ -n "$ms" ] || fail "the first ping got no answer (default mode)"
say "default mode, first ping, RTU held: ${ms} ms"
[ "$(echo "$ms < $RTU_DELAY / 2" | bc)" = 1 ] || fail "the answer waited for the RTU"
[ "$(cm_stat rxe1 comm_est)" -ge 1 ] || fail "COMM_EST path not taken (default mode)"
[ "$(cm_conns rxe0 | wc -l)" = 2 ] || fail "default mode: not one connection per direction"

# Both sides dial at once, with one connection both ways.
unload_module
hosts_down
load_module default_mode=connected cm_bidirectional=1
hosts_up
static_neighbours
in0 ping -c 1 -W 8 192.0.2.2 > /dev/null &
p0=$!
in1 ping -c 1 -W 8 192.0.2.1 > /dev/null &
p1=$!
wait $p0 || fail "simultaneous ping 0 -> 1"
wait $p1 || fail "simultaneous ping 1 -> 0"
wait_for 15 "a single connection" sh -c \
	"[ \$(grep -vc '^#' $(cm_debugfs rxe0)/connections) = 1 ] &&
	 [ \$(grep -vc '^#' $(cm_debugfs rxe1)/connections) = 1 ]"
say "crossed REQs: rxe0 $(cm_stat rxe0 req_crossed), rxe1 $(cm_stat rxe1 req_crossed)"
iperf_check 20 --bidir || fail "iperf3 --bidir byte counts differ"
python3 - /tmp/iperf-client.json <<'PY' || fail "reverse direction: byte counts differ"
import json, sys
c = json.load(open(sys.argv[1]))["end"]
sent = c["sum_sent_bidir_reverse"]["bytes"]
got = c["sum_received_bidir_reverse"]["bytes"]
print(f"reverse: server sent {sent}, client received {got}")
sys.exit(0 if 0 < got <= sent and sent - got < 16 << 20 else 1)
PY
cat "$(cm_debugfs rxe0)/connections" "$(cm_debugfs rxe1)/connections"
[ "$(cm_conns rxe0 | wc -l)" = 1 ] && [ "$(cm_conns rxe1 | wc -l)" = 1 ] ||
	fail "more than one connection after iperf3 --bidir"
[ "$(cm_stat rxe0 rc_rx_bytes)" -gt 1000000 ] && [ "$(cm_stat rxe1 rc_rx_bytes)" -gt 1000000 ] ||
	fail "not both directions over RC"
unload_module
say "rtr: ok"
