#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two VMs, datagram mode then connected mode with different options: role 0
# has the shared SRQ and sends over any connection to a peer
# (cm_bidirectional=1), role 1 has no SRQ (cm_srq=0) and the default
# one-connection-per-direction.  So
# role 0 answers over the QPs role 1 opened, which hold one receive until
# used: ping at 65000 octets, and 16 MiB each way over one TCP connection
# each, over RC, checked by length and SHA-256 (role 1 sends, then
# receives); rxe's counters without an exhausted retry, RNR included, on
# both ends.  The two VMs share no file: each transfer's receiver sends
# its length and digest back to the sender, which compares them, and the
# ends meet (pair_sync) before either unloads.
. "$(dirname "$0")/../lib.sh"

MIB=16

# pair_sync NAME: wait (180 s at most) until the peer has reached the
# same point, over the IPoIB interface: role 0 listens on port 5002 for
# NAME, role 1 sends it until answered.
pair_sync() {
	if [ "$ROLE" = 0 ]; then
		rm -f /tmp/sync.done
		python3 -S - "$1" <<'PY' &
import socket, sys
srv = socket.socket(socket.AF_INET)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("192.0.2.1", 5002))
srv.listen(1)
srv.settimeout(200)
while True:
    conn, _ = srv.accept()
    conn.settimeout(30)
    got = conn.recv(64).decode().strip()
    conn.sendall((got + "\n").encode())
    conn.close()
    if got == sys.argv[1]:
        open("/tmp/sync.done", "w").close()
        break
PY
		wait_explain 180 "role 1 at $1" pair_state test -e /tmp/sync.done
	else
		wait_explain 180 "role 0 at $1" pair_state sync_try "$1"
	fi
}

# sync_try NAME: role 0 answered NAME.
sync_try() {
	python3 -S - "$PEER4" "$1" <<'PY'
import socket, sys
s = socket.create_connection((sys.argv[1], 5002), timeout=5)
s.sendall((sys.argv[2] + "\n").encode())
sys.exit(0 if s.recv(64).decode().strip() == sys.argv[2] else 1)
PY
}

# What explains a peer that does not show up.
pair_state() {
	ip -s link show "$IB" || true
	ip neigh show dev "$IB" || true
	ss -tan || true
	cm_dump
}

# The transfers, on role 0's 192.0.2.1 port 5001, one connection each
# way: role 1 sends MIB MiB of random data and role 0 answers with the
# length and SHA-256 of what arrived, which must be role 1's own; then
# the same from role 0 to role 1.  Role 1 connects again for up to 120 s:
# role 0's server may not listen yet.  digest_exchange ROLE.
digest_exchange() {
	python3 -S - "$1" "$MIB" <<'PY'
import hashlib, os, socket, sys, time

role, mib = int(sys.argv[1]), int(sys.argv[2])


def receive_and_answer(conn):
    h, n = hashlib.sha256(), 0
    while True:
        b = conn.recv(1 << 16)
        if not b:
            break
        h.update(b)
        n += len(b)
    conn.sendall(b"%d %s\n" % (n, h.hexdigest().encode()))
    conn.close()
    print(f"received {n} {h.hexdigest()}", flush=True)


def send_and_check(conn):
    data = os.urandom(mib << 20)
    mine = "%d %s" % (len(data), hashlib.sha256(data).hexdigest())
    t = time.monotonic()
    conn.sendall(data)
    conn.shutdown(socket.SHUT_WR)
    got = conn.makefile().readline().strip()
    t = time.monotonic() - t
    conn.close()
    print(f"sent {mine}, {len(data) * 8 / t / 1e6:.1f} Mbit/s; "
          f"role {1 - role} received {got}", flush=True)
    return got == mine


if role == 0:
    srv = socket.socket(socket.AF_INET)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("192.0.2.1", 5001))
    srv.listen(1)
    srv.settimeout(300)

    def connect():
        conn, _ = srv.accept()
        conn.settimeout(120)
        return conn
else:
    def connect():
        end = time.monotonic() + 120
        while True:
            try:
                return socket.create_connection(("192.0.2.1", 5001), timeout=120)
            except OSError:
                if time.monotonic() > end:
                    raise
                time.sleep(1)

if role == 0:
    receive_and_answer(connect())
    ok = send_and_check(connect())
else:
    ok = send_and_check(connect())
    receive_and_answer(connect())
sys.exit(0 if ok else 1)
PY
}

fabric_pair
if [ "$ROLE" = 0 ]; then
	load_module cm_bidirectional=1
else
	load_module cm_srq=0
fi
pair_host_up
# Datagram mode first: the two VMs reach each other over UD.
wait_for 180 "the peer answering" ping -c 1 -W 2 "$PEER4"
ping -c 3 -i 0.3 "$PEER4" || fail "IPv4 ping to the peer (datagram)"
ping -6 -c 3 -i 0.3 "$PEER6" || fail "IPv6 ping to the peer (datagram)"
# Then connected mode, as an administrator switches it.  The peer's link
# address gains the RC flag (0x80) when it switches: relearn it until it
# shows, so neither end keeps sending to the datagram-mode address.
peer_connected() {
	ip neigh flush dev "$IB"
	ping -c 1 -W 2 "$PEER4" && ip neigh show "$PEER4" dev "$IB" | matches 'lladdr 80:'
}
switch_connected() {
	echo connected > "/sys/class/net/$IB/mode"
	[ "$(ip -o link show "$IB" | sed 's/.* mtu \([0-9]*\).*/\1/')" = 65520 ] ||
		fail "MTU is not 65520"
}
# Role 1 dials first, so that role 0 (bidirectional) answers over the QP
# role 1 opened, which is what this scenario is about.  Role 0 switches
# first and waits for role 1's connection; role 1 switches once it sees
# role 0's RC flag.  Until then role 0 knows role 1 only by its datagram
# address and cannot dial it; after, role 1 reaches role 0 only over RC.
peer_dialled() {
	cm_conns rxe0 | matches ' passive live '
}
if [ "$ROLE" = 0 ]; then
	switch_connected
	wait_for 180 "role 1's connection" peer_dialled
else
	wait_for 180 "the peer in connected mode" peer_connected
	switch_connected
fi
wait_for 180 "the peer in connected mode" peer_connected
# Role 1: wait until role 0 answers over the QP role 1 opened.
answers_on_ours() {
	ping -c 1 -W 2 "$PEER4" || true
	cm_conns rxe0 | awk '$3 == "active" && $9 > 0 { ok = 1 } END { exit !ok }'
}
if [ "$ROLE" = 1 ]; then
	wait_for 120 "role 0 answering over our QP" answers_on_ours
fi
ping -c 3 -i 0.3 -M do -s 65000 "$PEER4" || fail "ping -s 65000"
ping -6 -c 3 -i 0.3 -s 65000 "$PEER6" || fail "ping6 -s 65000"

# 16 MiB each way, role 1 first.  Each end judges what it sent.
digest_exchange "$ROLE" ||
	{ cm_dump; fail "the transfer from role $ROLE failed, or arrived short or changed"; }
cat "$(cm_debugfs rxe0)/connections"
[ "$(cm_stat rxe0 rc_tx_errors)" = 0 ] || fail "RC send errors"
if [ "$ROLE" = 1 ]; then
	[ "$(cm_stat rxe0 nosrq_rx_grown)" -gt 0 ] ||
		fail "the QPs role 1 opened never received"
fi
grep -qE "(per-QP|SRQ) receives" "$(cm_debugfs rxe0)/connections"
[ "$(cm_stat rxe0 rc_rx_bytes)" -gt 10000000 ] || fail "little came in over RC"
[ "$(cm_stat rxe0 rc_tx_bytes)" -gt 10000000 ] || fail "little went out over RC"
# No retry exhausted on this end's rxe (the other end checks its own),
# RNR included: role 0 answers over QPs that begin with one receive.
rxe_clean rxe0
# Stay up until the peer is done: its transfers and checks need this end.
pair_sync checked
unload_module
say "pair-mixed (role $ROLE): ok"
