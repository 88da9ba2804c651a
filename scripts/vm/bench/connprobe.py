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

import ctypes
import os
import socket
import sys
import time

CLONE_NEWNET = 0x40000000
DEBUGFS = "/sys/kernel/debug/ipoib_cm"


def stat(rdev, name):
    with open(f"{DEBUGFS}/{rdev}-1/stats") as f:
        for line in f:
            k, v = line.split()
            if k == name:
                return int(v)
    raise KeyError(name)


def active_live(rdev):
    n = 0
    with open(f"{DEBUGFS}/{rdev}-1/connections") as f:
        for line in f:
            if line.startswith("#"):
                continue
            fields = line.split()
            if len(fields) > 3 and fields[2] == "active" and fields[3] == "live":
                n += 1
    return n


def main():
    netns, src = sys.argv[1], sys.argv[2]
    dests = [a.split(":") for a in sys.argv[3:]]
    base = {ip: stat(rdev, "rc_rx_packets") for ip, rdev in dests}
    live0 = active_live(src)

    # The socket belongs to the namespace current when it is created;
    # debugfs stays visible (the mount namespace does not change).
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        sys.exit(f"setns: {os.strerror(ctypes.get_errno())}")
    os.close(fd)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    t0 = time.monotonic()
    for ip, _ in dests:
        sock.sendto(b"ipoib_cm connection probe", (ip, 9))
    got, live_t = {}, None
    while time.monotonic() - t0 < 60:
        now = time.monotonic()
        for ip, rdev in dests:
            if ip not in got and stat(rdev, "rc_rx_packets") > base[ip]:
                got[ip] = now - t0
        if live_t is None and active_live(src) >= live0 + len(dests):
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
