#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Connection setup probe for the benchmark (runs inside the test VM).

    connprobe.py NETNS SRC_RDEV DEST_IP:PEER_RDEV...

Sends one UDP datagram from network namespace NETNS to every DEST_IP at
once (time 0), then polls debugfs until each peer's interface (on RDMA
device PEER_RDEV) has received a packet over RC (its rc_rx_packets grew)
and the sender's interface (on SRC_RDEV) shows one more live connection
it opened per destination.  Prints one line per destination:

    DEST_IP rx_ms

and a last line:

    all rx_ms live_ms

(live_ms: when the sender's opened connections were all live).  Exits
non-zero if that does not happen within 60 s.
"""

import socket
import sys
import time

from cmdebugfs import active_live, enter_netns, stat


def main():
    netns, src = sys.argv[1], sys.argv[2]
    dests = [a.split(":") for a in sys.argv[3:]]
    base = {ip: stat(f"{rdev}-1", "rc_rx_packets") for ip, rdev in dests}
    live0 = active_live(f"{src}-1")

    enter_netns(netns)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    t0 = time.monotonic()
    for ip, _ in dests:
        sock.sendto(b"ipoib_cm connection probe", (ip, 9))
    got, live_t = {}, None
    while time.monotonic() - t0 < 60:
        now = time.monotonic()
        for ip, rdev in dests:
            if ip not in got and stat(f"{rdev}-1", "rc_rx_packets") > base[ip]:
                got[ip] = now - t0
        if live_t is None and active_live(f"{src}-1") >= live0 + len(dests):
            live_t = now - t0
        if len(got) == len(dests) and live_t is not None:
            break
        time.sleep(0.002)
    for ip, _ in dests:
        print(ip, f"{got[ip] * 1000:.1f}" if ip in got else "-")
    if len(got) != len(dests) or live_t is None:
        sys.exit("not every destination was reached over RC within 60 s")
    print("all", f"{max(got.values()) * 1000:.1f}", f"{live_t * 1000:.1f}")


if __name__ == "__main__":
    main()
