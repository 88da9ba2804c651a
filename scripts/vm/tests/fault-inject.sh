#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 1500
# Allocation failures on the setup paths, injected by the kernel's own
# fault injection (failslab with /proc/thread-self/fail-nth): the N-th slab
# allocation of one write fails, for N = 1, 2, 3 ... until a write runs
# without meeting its N-th allocation.  The writes:
#  - "connected" into the mode file, with the shared SRQ and, after a
#    reload, with cm_srq=0;
#  - a P_Key into create_child.
# After every injected failure the write either succeeded or failed with an
# error (never half done: the mode reads back what the result says), UD
# traffic still flows, and the log stays clean (the VM runner fails on any
# KASAN, lockdep or kmemleak report).  Then a clean switch and an exact
# transfer over RC, and rmmod with nothing left.
. "$(dirname "$0")/../lib.sh"

# The memory manager reports some failed allocations (vmalloc) with a
# stack: expected here, and only those (see klog-check.sh).
touch "$VMOUT/expect-alloc-failures"
FS=/sys/kernel/debug/failslab
[ -d "$FS" ] || fail "no failslab in this kernel"
# fail-nth decides when; failslab must also fail sleeping allocations and
# stay quiet (a stack trace for every injection would fail the log check).
echo N > "$FS/ignore-gfp-wait"
echo 0 > "$FS/verbose"

# sweep NAME KIND: the fail-nth sweep of one write, in one process (a
# process per try is slow under TCG).  KIND "mode": "connected" into
# $IB0/mode, which must then read connected with MTU 65520 if the write
# succeeded, datagram with 4092 if it failed; undone by "datagram".
# KIND "child": 0xffff into $IB0/create_child, after which $IB0.ffff
# exists exactly when the write succeeded; undone by delete_child.  UD
# must still work after a failure: a ping every eighth try.  After every
# try, undone, the RDMA core's count of each kind of object of rxe0 (PDs,
# CQs, QPs, SRQs, CM ids, MRs: rdma res show) must be back to what it was
# before the sweep: rxe's pools keep a leaked CQ or QP referenced, so
# kmemleak alone cannot see one.  N runs 1 .. 40, then 30 % further each
# time, until a write meets no N-th allocation; at least one injected
# failure must make the write fail.
sweep() {
	local out rc=0

	out=$(ip netns exec ns0 python3 -S - "$1" "$2" "$IB0" 192.0.2.2 rxe0 2>&1 <<'PY'
import errno, os, subprocess, sys, time
name, kind, ifname, peer, dev = sys.argv[1:]
os.chdir("/sys/class/net")

def objects():
    out = subprocess.run(["rdma", "res", "show"], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) > 1 and f[1] == dev + ":":
            return " ".join(f[2:])
    sys.exit(f"{name}: {dev} not in rdma res show")

def objects_back(what):
    end = time.monotonic() + 5     # rxe may free an object a little later
    while (now := objects()) != base:
        if time.monotonic() > end:
            sys.exit(f"{name}: {what}: {dev} has {now}; before the sweep {base}")
        time.sleep(0.1)

def read(path):
    with open(path) as f:
        return f.read().strip()

def write(path, word):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, word.encode())
    finally:
        os.close(fd)

if kind == "mode":
    target, word = ifname + "/mode", "connected"
    def state_ok(done):
        want = ("connected", "65520") if done else ("datagram", "4092")
        return (read(ifname + "/mode"), read(ifname + "/mtu")) == want
    def undo():
        write(ifname + "/mode", "datagram")
else:
    target, word = ifname + "/create_child", "0xffff"
    def state_ok(done):
        return os.path.exists(ifname + ".ffff") == done
    def undo():
        write(ifname + "/delete_child", "0xffff")

base = objects()
nth = os.open("/proc/thread-self/fail-nth", os.O_RDWR)
n, injected, failed = 1, 0, 0
while True:
    fd = os.open(target, os.O_WRONLY)
    os.write(nth, str(n).encode())
    try:
        os.write(fd, word.encode())
        res = "ok"
    except OSError as e:
        res = errno.errorcode.get(e.errno, str(e.errno))
    left = int(os.pread(nth, 32, 0))
    os.write(nth, b"0")
    os.close(fd)
    if not state_ok(res == "ok"):
        sys.exit(f"{name}: N={n} ({res}): the state does not match the result")
    if res == "ok":
        undo()
        if not state_ok(False):
            sys.exit(f"{name}: N={n}: undoing left the state wrong")
    objects_back(f"N={n} ({res})")
    if left:
        break
    injected += 1
    failed += res != "ok"
    if n % 8 == 0 and subprocess.run(["ping", "-c", "1", "-W", "5", peer],
                                     stdout=subprocess.DEVNULL).returncode:
        sys.exit(f"{name}: N={n}: no UD traffic after the failure")
    n = n + 1 if n < 40 else n * 13 // 10
    if n > 100000:
        sys.exit(f"{name}: no end to the allocations")
if res != "ok":
    sys.exit(f"{name}: the write without a fault failed: {res}")
print(f"{name}: {injected} faults injected (N up to {n}), "
      f"{failed} writes failed with an error, the rest succeeded; "
      f"{dev} back to {base} each time")
if not failed:
    sys.exit(f"{name}: no injected fault made the write fail")
PY
) || rc=$?
	say "$out"
	[ $rc = 0 ] || fail "$(echo "$out" | tail -n 1)"
}

# backend_faults NAME: the mode-switch sweep in the backend the module was
# loaded with, after a check that UD works to begin with.
backend_faults() {
	in0 ping -c 1 -W 10 192.0.2.2 > /dev/null || fail "$1: no UD traffic before"
	sweep "mode, $1" mode
}

fabric_single
load_module
hosts_up
backend_faults SRQ
sweep "create_child" child
unload_checked
hosts_down
load_module cm_srq=0
hosts_up
backend_faults "no SRQ"

# Nothing was left half done: connected mode works and is exact.
set_mode ns0 "$IB0" connected || fail "connected mode after the sweeps"
set_mode ns1 "$IB1" connected || fail "connected mode (ns1)"
static_neighbours
in0 ping -c 2 -W 10 192.0.2.2 > /dev/null || fail "ping in connected mode"
tcp_digest_check 8 || fail "an 8 MiB transfer arrived damaged or short"
cm_conns rxe0 | matches ' active live ' || fail "the transfer did not go over RC"
rxe_clean rxe0 rxe1
unload_checked
say "fault-inject: ok"
