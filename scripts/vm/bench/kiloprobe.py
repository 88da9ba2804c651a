#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Many connections from one interface (runs inside the bench VM).

    kiloprobe.py NETNS SRC_DEBUGFS DESTS_FILE

DESTS_FILE has one "IPV6_ADDRESS DEBUGFS_DIR" line per peer: the address
host 0 reaches the peer at, and the peer interface's debugfs directory
under /sys/kernel/debug/ipoib_cm.  SRC_DEBUGFS is host 0's.

Round 1 sends one UDP datagram from NETNS to every peer at once (time 0):
each one opens a connection.  It waits until host 0 shows one live
connection it opened per peer, then reads how many peers received their
datagram over RC.  Round 2 sends one more datagram to every peer over the
connections now open.  Prints "key value" lines:

    peers N
    live_ms T            all of host 0's connections live
    live N               host 0's live connections it opened
    rc_round1 N          peers that received round 1 over RC
    rc_round2 N          peers that received round 2 over RC
    live_after N         host 0's live connections after round 2

    unsent1, unsent2     datagrams the socket could not send (full for 60 s)
    resent               round 1 datagrams sent again: every RESEND seconds
                         to the peers that have received nothing yet

If not every connection is live within the timeout, live_ms is missing
and the rest is still measured.
"""

import os
import socket
import sys
import time

from cmdebugfs import active_live, enter_netns, stat

SO_SNDBUFFORCE = 32
TIMEOUT = 600
RESEND = 10


def rc_rx(d):
    return stat(d, "rc_rx_packets")


# Seconds between two first datagrams (KILO_PACE_MS).  Unpaced, 128 at
# once without the SRQ left every REQ in req-sent for 600 s, with 12 UD
# send errors counted; not explained yet (rxe moves a UD QP whose send
# failed to ERR, and QP1, which carries the CM's messages, is one).
PACE = float(os.environ.get("KILO_PACE_MS", "0")) / 1000


def send_all(sock, dests):
    """Send one datagram to every peer; returns how many could not go.

    A datagram waiting for its connection still counts against the
    socket's send buffer: a full buffer waits until connections come up
    and release theirs (up to a minute).
    """
    unsent = 0
    for ip, _ in dests:
        if PACE:
            time.sleep(PACE)
        end = time.monotonic() + 60
        while True:
            try:
                sock.sendto(b"ipoib_cm connection probe", (ip, 9))
                break
            except BlockingIOError:
                if time.monotonic() > end:
                    unsent += 1
                    break
                time.sleep(0.01)
    return unsent


def main():
    netns, src, path = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(path) as f:
        dests = [tuple(line.split()) for line in f if line.strip()]
    base = {d: rc_rx(d) for _, d in dests}
    live0 = active_live(src)

    enter_netns(netns)
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    # Room for a datagram per peer while the connections come up.
    sock.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 64 << 20)
    sock.setblocking(False)

    print("peers", len(dests), flush=True)
    t0 = time.monotonic()
    print("unsent1", send_all(sock, dests), flush=True)
    live, live_t, resent, next_resend = 0, None, 0, t0 + RESEND
    while time.monotonic() - t0 < TIMEOUT:
        live = active_live(src) - live0
        if live >= len(dests):
            live_t = time.monotonic() - t0
            break
        if time.monotonic() >= next_resend:
            # As an application would: send again to the peers that have
            # not received anything yet (a first datagram may have been
            # dropped while the path to the peer's GID was resolved).
            again = [(ip, d) for ip, d in dests if rc_rx(d) == base[d]]
            resent += len(again)
            send_all(sock, again)
            next_resend = time.monotonic() + RESEND
        time.sleep(0.5)
    print("resent", resent)
    print("live", live)
    if live_t is None:
        print(f"only {live} of {len(dests)} connections live after {TIMEOUT} s",
              file=sys.stderr)
    else:
        print("live_ms", f"{live_t * 1000:.0f}")
    # Held packets go out once a connection is live: a moment for the last.
    time.sleep(2)
    got1 = {d: rc_rx(d) for _, d in dests}
    print("rc_round1", sum(got1[d] > base[d] for _, d in dests), flush=True)

    print("unsent2", send_all(sock, dests))
    time.sleep(5)
    print("rc_round2", sum(rc_rx(d) > got1[d] for _, d in dests))
    print("live_after", active_live(src) - live0)


if __name__ == "__main__":
    main()
