#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the benchmark's raw measurements into its report.

    bench-report.py RAW_CSV OUTDIR

RAW_CSV is what scripts/vm/bench/run.sh wrote in the VM (group, case,
metric, value, unit).  Writes OUTDIR/bench.csv (the measurements and the
ratios computed from them), OUTDIR/bench.md (tables) and OUTDIR/bench.png
(gnuplot).  Every ratio compares numbers from the same run.
"""

import csv
import os
import statistics
import subprocess
import sys


def load(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            rows.append(r)
    return rows


class Results:
    def __init__(self, rows):
        self.rows = rows
        self.v = {}
        for r in rows:
            try:
                self.v[(r["group"], r["case"], r["metric"])] = float(r["value"])
            except ValueError:
                pass

    def get(self, group, case, metric):
        return self.v.get((group, case, metric))

    def cases(self, group, prefix=""):
        seen = []
        for r in self.rows:
            if r["group"] == group and r["case"].startswith(prefix) \
                    and r["case"] not in seen:
                seen.append(r["case"])
        return seen


def fmt(x, nd=1):
    if x is None:
        return "n/a"
    if isinstance(x, float) and x.is_integer() and nd == 0:
        return str(int(x))
    return f"{x:.{nd}f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def main():
    raw, outdir = sys.argv[1], sys.argv[2]
    R = Results(load(raw))
    secs = R.get("meta", "run", "secs")
    peers = int(R.get("meta", "run", "peers") or 0)
    tput = lambda c: R.get("tcp", c, "throughput")
    cpu = lambda c: R.get("tcp", c, "cpu_ns_per_byte")
    rc64 = R.get("rc", "send-65536", "throughput")

    # Ratios: (name, value, target or None, what it compares, whether the
    # target is a ceiling rather than a floor)
    ratios = []

    def add(name, val, target, what, at_most=False):
        ratios.append((name, val, target, what, at_most))

    for p in (1, 4):
        add(f"connected_srq_P{p}/raw_rc_64k",
            ratio(tput(f"conn-srq-P{p}"), rc64), 0.9,
            f"TCP over connected mode (SRQ), {p} stream(s), vs ib_send_bw 64 KiB")
    rc64b = R.get("rc", "send-65536-again", "throughput")
    for p in (1, 4):
        add(f"connected_srq_P{p}/raw_rc_64k_again",
            ratio(tput(f"conn-srq-P{p}"), rc64b), 0.9,
            f"the same against ib_send_bw 64 KiB measured right after the connected runs")
    for p in (1, 4):
        add(f"connected_srq_P{p}/datagram_P{p}",
            ratio(tput(f"conn-srq-P{p}"), tput(f"datagram-P{p}")), 3.0,
            f"connected (SRQ) vs datagram mode, {p} stream(s)")
    for p in (1, 4):
        add(f"connected_nosrq_P{p}/datagram_P{p}",
            ratio(tput(f"conn-nosrq-P{p}"), tput(f"datagram-P{p}")), 3.0,
            f"connected (no SRQ) vs datagram mode, {p} stream(s)")
    add("nosrq_P1/nosrq_full_ring_P1",
        ratio(tput("conn-nosrq-P1"), tput("conn-nosrq-full-P1")), 0.95,
        "no SRQ, one stream on a new connection (its ring grown on demand "
        "from 16) vs one stream over the ring already full")
    pairs = [tput(c) for c in ("conn-nosrq-P1", "conn-nosrq-P1-again",
                               "conn-nosrq-full-P1", "conn-nosrq-full-P1-again")]
    if None not in pairs:
        add("nosrq_P1/nosrq_full_ring_P1_both_pairs",
            ratio(pairs[0] + pairs[1], pairs[2] + pairs[3]), 0.95,
            "the same from two pairs of runs, on demand then full, and "
            "again after the grown connection was reclaimed")
    for p in (1, 4):
        add(f"srq_P{p}/nosrq_P{p}",
            ratio(tput(f"conn-srq-P{p}"), tput(f"conn-nosrq-P{p}")), None,
            f"connected mode, SRQ vs per-QP receives, {p} stream(s)")
    for p in (1, 4):
        add(f"connected_srq_P{p}/veth_P{p}",
            ratio(tput(f"conn-srq-P{p}"), tput(f"veth-P{p}")), None,
            f"connected (SRQ) vs TCP on a bare veth pair, {p} stream(s)")
        add(f"datagram_P{p}/veth_P{p}",
            ratio(tput(f"datagram-P{p}"), tput(f"veth-P{p}")), None,
            f"datagram vs TCP on a bare veth pair, {p} stream(s)")
    add("raw_rc_64k/veth_P1", ratio(rc64, tput("veth-P1")), None,
        "ib_send_bw 64 KiB vs TCP on a bare veth pair")
    for p in (1, 4):
        add(f"cpu_per_byte_connected_srq_P{p}/datagram_P{p}",
            ratio(cpu(f"conn-srq-P{p}"), cpu(f"datagram-P{p}")), None,
            f"guest CPU per byte, connected (SRQ) vs datagram, {p} stream(s)")
    add("cpu_per_byte_connected_srq_P1/raw_rc_64k",
        ratio(cpu("conn-srq-P1"), R.get("rc", "send-65536", "cpu_ns_per_byte")),
        None, "guest CPU per byte, TCP over connected mode vs ib_send_bw 64 KiB")
    # TCP over RC costs at least TCP itself plus the RC transport under it.
    c_veth, c_rc = cpu("veth-P1"), R.get("rc", "send-65536", "cpu_ns_per_byte")
    add("cpu_per_byte_connected_srq_P1/(veth_P1+raw_rc_64k)",
        ratio(cpu("conn-srq-P1"), c_veth + c_rc) if None not in (c_veth, c_rc) else None,
        1.1, "guest CPU per byte, TCP over connected mode vs TCP on a bare veth "
        "plus ib_send_bw 64 KiB (the additive ceiling)", True)

    # Memory per connection (host 0's opened connection and the peer's
    # accepted end: one connection, both ends in this VM).
    mem = {}
    for b in ("srq", "nosrq"):
        n = peers
        c = f"{b}-conns-{n}"
        for m in ("used_delta", "slab_delta", "vmalloc_delta", "rx_buf_bytes"):
            val = R.get("mem", c, m)
            mem[(b, m)] = val / n if val is not None and n else None
        # Growth from the first to the last connection, per connection.
        u1 = R.get("mem", f"{b}-conns-1", "used_delta")
        un = R.get("mem", f"{b}-conns-{n}", "used_delta")
        mem[(b, "marginal")] = (un - u1) / (n - 1) if None not in (u1, un) and n > 1 else None
    add("memory_per_conn_nosrq/srq",
        ratio(mem[("nosrq", "used_delta")], mem[("srq", "used_delta")]), None,
        "memory in use per connection, no-SRQ vs SRQ")

    # Latency (part l): mean round trips of 64 octets.
    lat = lambda c: R.get("lat", c, "rtt_mean")
    for b in ("srq", "nosrq"):
        add(f"tcp_lat_connected_{b}/datagram",
            ratio(lat(f"conn-{b}"), lat("datagram")), 1.0,
            f"TCP round trip, connected ({b}) vs datagram mode", True)
        add(f"tcp_lat_connected_{b}/raw_rc_lat",
            ratio(lat(f"conn-{b}"), lat("raw-rc")), 2.0,
            f"TCP round trip over connected mode ({b}) vs a raw RC round trip", True)
    add("tcp_lat_datagram/raw_ud_lat", ratio(lat("datagram"), lat("raw-ud")), None,
        "TCP round trip over datagram mode vs a raw UD round trip")
    add("tcp_lat_veth+raw_rc/connected_srq",
        ratio((lat("veth") or 0) + (lat("raw-rc") or 0), lat("conn-srq"))
        if lat("veth") is not None and lat("raw-rc") is not None else None, None,
        "TCP over a bare veth plus a raw RC round trip (the additive floor) vs "
        "TCP over connected mode (SRQ)")

    # Hand-offs per round trip (part l's traced runs), against the sum of
    # what the stack alone (veth) and the transport alone (raw RC) take.
    cs = lambda c: R.get("lat", c, "ctx_switches_per_rt")
    if None not in (cs("veth"), cs("raw-rc")):
        for b in ("srq", "nosrq"):
            add(f"ctx_switches_connected_{b}/(veth+raw_rc)",
                ratio(cs(f"conn-{b}"), cs("veth") + cs("raw-rc")), None,
                f"context switches per round trip, connected ({b}) vs TCP on a "
                "bare veth plus a raw RC round trip")

    # Scaling (part m): aggregate throughput of each streams x peers cell
    # against one stream to one peer, same backend.
    sc = lambda c: R.get("scale", c, "throughput")
    for b in ("srq", "nosrq"):
        one = sc(f"{b}-peers1-streams1")
        for c in R.cases("scale", f"{b}-peers"):
            if c == f"{b}-peers1-streams1":
                continue
            add(f"scale_{c.replace('-', '_')}/one_stream", ratio(sc(c), one),
                1.7 if c.endswith("peers4-streams1") else None,
                f"connected ({b}): {c.split('-')[2][7:]} stream(s) to each of "
                f"{c.split('-')[1][5:]} peer(s) vs one stream to one peer")

    # bench.csv: the measurements, then the ratios.
    with open(os.path.join(outdir, "bench.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["group", "case", "metric", "value", "unit"])
        for r in R.rows:
            w.writerow([r["group"], r["case"], r["metric"], r["value"], r["unit"]])
        for name, val, target, _, at_most in ratios:
            w.writerow(["ratio", name, "ratio", fmt(val, 3), "x"])
            if target is not None:
                w.writerow(["ratio", name, "target_at_most" if at_most else "target",
                            fmt(target, 2), "x"])
        for (b, m), val in mem.items():
            w.writerow(["mem", f"{b}-per-connection", m, fmt(val, 1),
                        "B" if m == "rx_buf_bytes" else "kB"])

    md = []
    md.append("# ipoib_cm benchmark\n")
    md.append(f"One VM (TCG unless KVM is available), bench kernel, {fmt(R.get('meta', 'run', 'vcpus'), 0)} vCPUs, "
              f"{fmt(secs, 0)} s per bandwidth run, {peers} peers for setup and memory. "
              "Absolute numbers depend on a shared, emulated machine; the ratios "
              "compare numbers from this one run.\n")

    clock = next((r["value"] for r in R.rows if r["metric"] == "clocksource"), "?")
    md.append(f"Guest clock source: {clock} (setup times are no finer than its tick).\n")

    md.append("## Raw RC: ib_send_bw rxe0 -> rxe1\n")
    md.append("| message | Mbit/s | CPU ns/B | guest CPU busy |")
    md.append("| ---: | ---: | ---: | ---: |")
    sizes = []
    for c in R.cases("rc", "send-"):
        size = int(c.split("-")[1])
        label = f"{size // 1024} KiB"
        if c.endswith("-again"):
            label += " (again, after the connected runs)"
        else:
            sizes.append(size)
        md.append(f"| {label} | {fmt(R.get('rc', c, 'throughput'))} | "
                  f"{fmt(R.get('rc', c, 'cpu_ns_per_byte'), 2)} | "
                  f"{fmt(R.get('rc', c, 'cpu_busy'))} % |")
    md.append("")

    md.append("## TCP (iperf3)\n")
    md.append("| path | MTU | streams | Mbit/s | retransmits | RNR NAKs (exhausted) | "
              "CPU ns/B | guest CPU busy |")
    md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    names = {"veth": ("bare veth pair", "9000"),
             "datagram": ("ipoib_cm datagram", fmt(R.get("meta", "datagram", "mtu"), 0)),
             "conn-srq": ("ipoib_cm connected, SRQ", fmt(R.get("meta", "connected", "mtu"), 0)),
             "conn-nosrq": ("ipoib_cm connected, no SRQ", fmt(R.get("meta", "connected", "mtu"), 0)),
             "conn-nosrq-full": ("ipoib_cm connected, no SRQ, ring already full",
                                 fmt(R.get("meta", "connected", "mtu"), 0))}
    for c in R.cases("tcp"):
        again = c.endswith("-again")
        base, p = c.removesuffix("-again").rsplit("-P", 1)
        label, mtu = names.get(base, (base, ""))
        if again:
            label += ", again"
        rnr = R.get('tcp', c, 'rnr_naks')
        rnr = f"{fmt(rnr, 0)} ({fmt(R.get('tcp', c, 'rnr_exhausted'), 0)})" \
            if rnr is not None else ""
        md.append(f"| {label} | {mtu} | {p} | {fmt(tput(c))} | "
                  f"{fmt(R.get('tcp', c, 'retransmits'), 0)} | {rnr} | {fmt(cpu(c), 2)} | "
                  f"{fmt(R.get('tcp', c, 'cpu_busy'))} % |")
    md.append("")

    if R.cases("lat"):
        md.append("## Latency: 64-octet round trips (part l)\n")
        md.append(f"Request/response, one at a time, {fmt(R.get('meta', 'run', 'lat_n'), 0)} "
                  "round trips per case: TCP with rrlat (TCP_NODELAY), raw RC and "
                  "UD with ibv_rc_pingpong and ibv_ud_pingpong sleeping on "
                  "completion events (mean only).\n")
        md.append("The last four columns are per round trip, counted with the "
                  "kernel's tracepoints over a further "
                  f"{fmt(R.get('meta', 'run', 'hops_n'), 0)} round trips (the whole "
                  "guest, both ends): context switches, work items run "
                  "(rdma_rxe's requester, responder and completer run in a "
                  "workqueue), IPIs sent and ksoftirqd wake-ups.\n")
        md.append("| path | mean (us) | median (us) | 99th percentile (us) | min (us) | "
                  "context switches | work items | IPIs | ksoftirqd wake-ups |")
        md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        lnames = {"raw-rc": "raw RC (ibv_rc_pingpong)", "raw-ud": "raw UD (ibv_ud_pingpong)",
                  "veth": "TCP, bare veth pair", "datagram": "TCP, ipoib_cm datagram",
                  "conn-srq": "TCP, ipoib_cm connected, SRQ",
                  "conn-nosrq": "TCP, ipoib_cm connected, no SRQ"}
        for c in R.cases("lat"):
            g = lambda m: R.get("lat", c, m)
            md.append(f"| {lnames.get(c, c)} | {fmt(g('rtt_mean'))} | {fmt(g('rtt_p50'))} | "
                      f"{fmt(g('rtt_p99'))} | {fmt(g('rtt_min'))} | "
                      f"{fmt(g('ctx_switches_per_rt'))} | {fmt(g('work_items_per_rt'))} | "
                      f"{fmt(g('ipis_per_rt'))} | {fmt(g('ksoftirqd_wakeups_per_rt'))} |")
        md.append("")

    if R.cases("scale"):
        md.append("## Streams x peers (part m)\n")
        md.append("Host 0 sends to each peer with its own iperf3 client; Mbit/s "
                  "is the sum of what the peers received; speed-up is against "
                  "one stream to one peer with the same backend.\n")
        md.append("| backend | peers | streams per peer | Mbit/s | speed-up | CPU ns/B | "
                  "guest CPU busy | RNR NAKs |")
        md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for c in R.cases("scale", ""):
            if "-peers" not in c:
                continue
            b, p, st = c.split("-")
            g = lambda m: R.get("scale", c, m)
            md.append(f"| {b} | {p[5:]} | {st[7:]} | {fmt(g('throughput'))} | "
                      f"{fmt(ratio(g('throughput'), sc(f'{b}-peers1-streams1')), 2)} | "
                      f"{fmt(g('cpu_ns_per_byte'), 2)} | {fmt(g('cpu_busy'))} % | "
                      f"{fmt(g('rnr_naks'), 0)} |")
        md.append("")
        md.append("RNR retries exhausted: " + ", ".join(
            f"{b} {fmt(R.get('scale', b, 'rnr_exhausted'), 0)}" for b in ("srq", "nosrq")) + ".\n")

    md.append("## Ratios (same run)\n")
    md.append("| ratio | value | target | compares |")
    md.append("| --- | ---: | ---: | --- |")
    for name, val, target, what, at_most in ratios:
        tgt = f"{'<=' if at_most else '>='} {target:g}" if target is not None else ""
        md.append(f"| `{name}` | {fmt(val, 2)} | {tgt} | {what} |")
    md.append("")

    md.append("## Connection setup\n")
    md.append("First packet (one UDP datagram) to a new peer until the peer "
              "received it over RC, and until host 0's connection was live.\n")
    md.append("| backend | one peer at a time: median ms to RC receive (min-max) | median ms to live | "
              f"{peers} peers at once: ms until all received | connections/s |")
    md.append("| --- | ---: | ---: | ---: | ---: |")
    for b in ("srq", "nosrq"):
        rx = [R.get("setup", f"{b}-serial-{i}", "first_packet_to_rc_rx") for i in range(1, peers + 1)]
        lv = [R.get("setup", f"{b}-serial-{i}", "first_packet_to_live") for i in range(1, peers + 1)]
        rx = [x for x in rx if x is not None]
        lv = [x for x in lv if x is not None]
        md.append(f"| {b} | {fmt(statistics.median(rx)) if rx else 'n/a'} "
                  f"({fmt(min(rx)) if rx else ''}-{fmt(max(rx)) if rx else ''}) | "
                  f"{fmt(statistics.median(lv)) if lv else 'n/a'} | "
                  f"{fmt(R.get('setup', f'{b}-burst-{peers}', 'first_packet_to_rc_rx'))} | "
                  f"{fmt(R.get('setup', f'{b}-burst-{peers}', 'conns_per_s'))} |")
    md.append("")

    md.append("## Memory\n")
    md.append("Whole-VM deltas (both ends of every connection live in this VM). "
              "\"in use\" is MemTotal - MemFree - Buffers - Cached.\n")
    md.append("| backend | per interface, entering connected mode (kB) | per connection: in use (kB) | "
              "slab (kB) | vmalloc (kB) | receive buffers (debugfs, B) | marginal in use, connection 2..N (kB) |")
    md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for b in ("srq", "nosrq"):
        md.append(f"| {b} | {fmt(R.get('mem', f'{b}-mode', 'used_per_interface'), 0)} | "
                  f"{fmt(mem[(b, 'used_delta')])} | {fmt(mem[(b, 'slab_delta')])} | "
                  f"{fmt(mem[(b, 'vmalloc_delta')])} | {fmt(mem[(b, 'rx_buf_bytes')], 0)} | "
                  f"{fmt(mem[(b, 'marginal')])} |")
    md.append("")
    md.append(f"no-SRQ receive buffers: opened, idle connection "
              f"{fmt(R.get('mem', 'nosrq-opened-idle', 'rx_buf_bytes'), 0)} B; "
              f"accepted connection {fmt(R.get('mem', 'nosrq-accepted', 'rx_buf_bytes'), 0)} B; "
              f"the accepted end of the connection that carried the iperf3 runs "
              f"{fmt(R.get('mem', 'nosrq-loaded', 'rx_buf_bytes'), 0)} B right after them, "
              f"{fmt(R.get('mem', 'nosrq-quiet-60s', 'rx_buf_bytes'), 0)} B 60 s later "
              f"(grown, quiet connections closed: "
              f"{fmt(R.get('mem', 'nosrq-quiet-60s', 'reclaimed'), 0)}).\n")
    n = [c for c in R.cases("kilo") if c.startswith("nosrq-") and not c.endswith("-again")]
    for c in n:
        cnt = R.get("kilo", c, "peers")
        op = R.get("kilo", c, "rx_buf_opened")
        ac = R.get("kilo", c, "rx_buf_accepted")
        md.append(f"{fmt(cnt, 0)} idle no-SRQ connections (part n): receive buffers of "
                  f"the opened ends {fmt(op / 2**20 if op is not None else None)} MiB, of the "
                  f"accepted ends {fmt(ac / 2**20 if ac is not None else None)} MiB, "
                  f"{fmt((op + ac) / 2**20 if op is not None and ac is not None else None)} MiB "
                  f"in all.\n")
        live = R.get("kilo", c, "live")
        if live is not None and cnt is not None and live < cnt:
            md.append(f"**Only {fmt(live, 0)} of those {fmt(cnt, 0)} connections were "
                      "live**: the numbers above are not those of idle connections.\n")
    md.append("| connections | " + " | ".join(f"{b} in use (kB)" for b in ("srq", "nosrq")) + " |")
    md.append("| ---: | ---: | ---: |")
    for i in range(1, peers + 1):
        md.append(f"| {i} | " + " | ".join(
            fmt(R.get("mem", f"{b}-conns-{i}", "used_delta"), 0) for b in ("srq", "nosrq")) + " |")
    md.append("")

    kilo = R.cases("kilo")
    if kilo:
        md.append("## Many connections on one interface\n")
        md.append("Host 0 sends one UDP datagram to each peer at once (each opens a "
                  "connection; every 10 s it sends again to the peers that have "
                  "received nothing), then one more over the open connections. Peers are "
                  "interfaces and children on further rxe devices; srq-N (part k): an SRQ "
                  "of 16 receive buffers per interface; nosrq-N (part n): no SRQ, "
                  "the default rings.\n")
        md.append("| probe | peers | live connections | all live after (s) | connections/s | "
                  "round 1 over RC (sent again) | round 2 over RC | live after round 2 |")
        md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for c in kilo:
            g = lambda m: R.get("kilo", c, m)
            ms = g("live_ms")
            base = c[:-len("-again")] if c.endswith("-again") else c
            name = base + (", again after the mode switch" if c != base else ", first")
            md.append(f"| {name} | {fmt(g('peers'), 0)} | {fmt(g('live'), 0)} | "
                      f"{fmt(ms / 1000 if ms is not None else None)} | "
                      f"{fmt(g('conns_per_s'))} | {fmt(g('rc_round1'), 0)} "
                      f"({fmt(g('resent'), 0)}) | "
                      f"{fmt(g('rc_round2'), 0)} | {fmt(g('live_after'), 0)} |")
        md.append("")
        md.append("Memory and teardown with every connection open: the mode switch "
                  "is host 0's `echo datagram > mode` (it returns once host 0's ends "
                  "are closed); the peers' ends close on its DREQs.\n")
        md.append("| case | in use per connection (kB) | slab per connection (kB) | "
                  "peers created, up (s) | mode switch returns (ms) | host 0 closing (ms) | "
                  "every end closed (ms) | rmmod (s) | rmmod: to the first device "
                  "removal, devices removed, after the last (s) |")
        md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for c in kilo:
            if c.endswith("-again"):
                continue
            g = lambda m: R.get("kilo", c, m)
            md.append(f"| {c} | {fmt(g('used_per_conn'), 0)} | {fmt(g('slab_per_conn'), 0)} | "
                      f"{fmt(g('peers_created_s'), 0)}, {fmt(g('peers_up_s'), 0)} | "
                      f"{fmt(g('modeswitch_ms'), 0)} | {fmt(g('modeswitch_close_ms'), 0)} | "
                      f"{fmt(g('all_closed_ms'), 0)} | {fmt(g('unload_s'), 0)} | "
                      f"{fmt(g('to_first_removal_s'))}, {fmt(g('devices_gone_s'))}, "
                      f"{fmt(g('after_last_removal_s'))} |")
        md.append("")

    # Profiles (perf, one stream), side by side.
    profs, mod = {}, {}
    for name in ("datagram", "connected", "scale"):
        path = os.path.join(os.path.dirname(raw), f"profile-{name}.txt")
        if os.path.exists(path):
            syms = []
            with open(path) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) >= 3 and parts[0].endswith("%") and parts[1] == "[k]":
                        syms.append((parts[0], parts[2]))
                    elif len(parts) >= 3 and parts[0].endswith("%") and parts[1] == "[.]":
                        syms.append((parts[0], parts[2]))
                    elif len(parts) == 2 and parts[1] == "[ipoib_cm]":
                        mod[name] = parts[0]
            profs[name] = syms[:12]
    if profs:
        md.append("## Where the CPU goes (perf)\n")
        md.append("datagram, connected: one iperf3 stream to one peer (part b); "
                  "scale: one stream to each of 4 peers, connected with the SRQ "
                  "(part m).\n")
        names = list(profs)
        md.append("| " + " | ".join(f"{n}: share | symbol" for n in names) + " |")
        md.append("| " + " | ".join("---: | ---" for _ in names) + " |")
        for i in range(max(len(v) for v in profs.values())):
            cells = []
            for n in names:
                if i < len(profs[n]):
                    cells.append(f"{profs[n][i][0]} | `{profs[n][i][1]}`")
                else:
                    cells.append(" | ")
            md.append("| " + " | ".join(cells) + " |")
        md.append("")
        md.append("Samples in the ipoib_cm module itself: " +
                  ", ".join(f"{n} {mod.get(n, 'n/a')}" for n in names) + ".\n")

    # The largest gap: the target missed by the widest margin.
    gaps = [((target / val if at_most else val / target), name, val, target)
            for name, val, target, _, at_most in ratios
            if target is not None and val]
    if gaps:
        g = min(gaps)
        md.append("## Largest gap\n")
        md.append(f"`{g[1]}` = {fmt(g[2], 2)} against a target of {fmt(g[3], 1)} "
                  f"({fmt(100 * g[0], 0)} % of it).\n")

    with open(os.path.join(outdir, "bench.md"), "w") as f:
        f.write("\n".join(md))

    plot(R, outdir, sizes, peers)


def plot(R, outdir, sizes, peers):
    """bench.png: one panel for each part that ran; none without data."""
    d = os.path.join(outdir, "plot")
    os.makedirs(d, exist_ok=True)
    num = lambda v: "NaN" if v is None else str(v)
    bars = """set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.8
set xtics rotate by -35 noenhanced
set key off
"""
    lines = """set style data linespoints
set xtics norotate
set key bottom right
"""
    panels = []

    rc = [(s // 1024, R.get("rc", f"send-{s}", "throughput")) for s in sizes]
    if any(v is not None for _, v in rc):
        with open(os.path.join(d, "rc.dat"), "w") as f:
            f.writelines(f"{k} {num(v)}\n" for k, v in rc)
        hl = []
        for p, col in ((1, "#d62728"), (4, "#9467bd")):
            v = R.get("tcp", f"conn-srq-P{p}", "throughput")
            if v is not None:
                hl.append(f"{v} with lines dt 2 lw 2 lc rgb '{col}' "
                          f"title 'TCP connected SRQ, {p} stream(s)'")
        panels.append(lines + f"""set title 'raw RC (ib\\_send\\_bw) vs TCP over connected mode'
set xlabel 'message size (KiB)'
set ylabel 'Mbit/s'
set logscale x 2
set yrange [0:*]
plot '{d}/rc.dat' using 1:2 lw 2 pt 7 title 'ib\\_send\\_bw RC send'{''.join(', ' + h for h in hl)}
unset logscale x
""")

    def bar_panel(group, metric, title, ylabel, colour):
        """A bar for each case of GROUP that has METRIC."""
        vals = [(c, R.get(group, c, metric)) for c in R.cases(group)]
        vals = [(c, v) for c, v in vals if v is not None]
        if not vals:
            return
        with open(os.path.join(d, f"{group}.dat"), "w") as f:
            f.writelines(f"\"{c}\" {v}\n" for c, v in vals)
        panels.append(bars + f"""set title '{title}'
set xlabel ''
set ylabel '{ylabel}'
set yrange [0:*]
plot '{d}/{group}.dat' using 2:xtic(1) lc rgb '{colour}'
""")

    bar_panel("tcp", "throughput", "iperf3 TCP", "Mbit/s", "#1f77b4")

    mem = [(i, R.get("mem", f"srq-conns-{i}", "used_delta"),
            R.get("mem", f"nosrq-conns-{i}", "used_delta")) for i in range(1, peers + 1)]
    if any(a is not None or b is not None for _, a, b in mem):
        with open(os.path.join(d, "mem.dat"), "w") as f:
            f.writelines(f"{i} {num(a and a / 1024)} {num(b and b / 1024)}\n" for i, a, b in mem)
        panels.append(lines + f"""set title 'memory in use vs connections (whole VM)'
set xlabel 'connections (host 0 to N peers)'
set ylabel 'MiB'
set autoscale y
set key top left
plot '{d}/mem.dat' using 1:2 lw 2 pt 7 title 'SRQ', '' using 1:3 lw 2 pt 5 title 'no SRQ'
""")

    scale = [(st, [R.get("scale", f"{b}-peers{pe}-streams{st}", "throughput")
                   for b in ("srq", "nosrq") for pe in (1, 4)]) for st in (1, 2, 4)]
    if any(v is not None for _, row in scale for v in row):
        with open(os.path.join(d, "scale.dat"), "w") as f:
            f.writelines(f"{st} " + " ".join(num(v) for v in row) + "\n" for st, row in scale)
        panels.append(lines + f"""set title 'streams x peers: TCP to 1 and to 4 peers'
set xlabel 'streams per peer'
set ylabel 'Mbit/s, all peers'
set yrange [0:*]
set xtics (1, 2, 4)
plot '{d}/scale.dat' using 1:2 lw 2 pt 7 title 'SRQ, 1 peer', '' using 1:3 lw 2 pt 5 title 'SRQ, 4 peers', \\
     '' using 1:4 lw 2 pt 9 title 'no SRQ, 1 peer', '' using 1:5 lw 2 pt 11 title 'no SRQ, 4 peers'
set xtics autofreq
""")

    bar_panel("lat", "rtt_mean", "64-octet round trip, mean", "us", "#2ca02c")

    if not panels:
        return
    rows = 1 if len(panels) <= 3 else 2
    cols = (len(panels) + rows - 1) // rows
    script = (f"set terminal pngcairo size {500 * cols},{500 * rows} font ',10'\n"
              f"set output '{os.path.join(outdir, 'bench.png')}'\n"
              f"set multiplot layout {rows},{cols} "
              "title 'ipoib\\_cm over rdma\\_rxe (one VM, same run)'\n"
              "set grid\n" + "".join(panels) + "unset multiplot\n")
    with open(os.path.join(d, "bench.gp"), "w") as f:
        f.write(script)
    if subprocess.run(["gnuplot", os.path.join(d, "bench.gp")]).returncode:
        print("bench-report: gnuplot failed; no plot", file=sys.stderr)


if __name__ == "__main__":
    main()
