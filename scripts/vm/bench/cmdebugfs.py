# SPDX-License-Identifier: GPL-2.0
"""What the bench probes read of ipoib_cm's debugfs, and entering a netns.

DIR is an interface's directory under /sys/kernel/debug/ipoib_cm:
<ibdev>-<port> for a port's own interface, <ibdev>-<port>.<P_Key>.<UD QPN>
for a child.
"""

import ctypes
import os

CLONE_NEWNET = 0x40000000
DEBUGFS = "/sys/kernel/debug/ipoib_cm"


def stat(d, name):
    """A connected-mode counter of interface DIR."""
    with open(f"{DEBUGFS}/{d}/stats") as f:
        for line in f:
            k, v = line.split()
            if k == name:
                return int(v)
    raise KeyError(name)


def active_live(d):
    """How many connections interface DIR opened are live."""
    n = 0
    with open(f"{DEBUGFS}/{d}/connections") as f:
        for line in f:
            fields = line.split()
            if line.startswith("#") or len(fields) < 4:
                continue
            if fields[2] == "active" and fields[3] == "live":
                n += 1
    return n


def enter_netns(name):
    """Move this process to network namespace NAME (ip netns).

    Sockets belong to the namespace current when they are created;
    debugfs stays visible (the mount namespace does not change).
    """
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns")
    finally:
        os.close(fd)
