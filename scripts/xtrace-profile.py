#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a traced scenario's time went (scripts/vm/xtrace.sh).

    scripts/xtrace-profile.py XTRACE [N]

Each trace line's time runs until the next line; the time is summed by
command (its first two words, "ip netns exec NS" and in0/in1 counted as
"nsexec"), and the N largest sums (default 30) are printed with how many
times each command ran.  Background commands' lines interleave with the
foreground's, so a sum is the time until the next traced line, not the
command's own: read it as where the scenario waited.
"""
import collections
import re
import sys

LINE = re.compile(r"^\++(\d+\.\d+) \S+ (.*)")


def key(cmd):
    words = cmd.split()
    if words[:3] == ["ip", "netns", "exec"] and len(words) > 4:
        words = ["nsexec"] + words[4:]
    elif words and words[0] in ("in0", "in1", "in2"):
        words = ["nsexec"] + words[1:]
    return " ".join(words[:2])[:40]


def main():
    events = []
    with open(sys.argv[1], errors="replace") as trace:
        for line in trace:
            m = LINE.match(line)
            if m:
                events.append((float(m.group(1)), m.group(2)))
    if len(events) < 2:
        sys.exit("no timestamped trace lines in " + sys.argv[1])
    total = collections.Counter()
    count = collections.Counter()
    for (t, cmd), (t_next, _) in zip(events, events[1:]):
        total[key(cmd)] += max(0.0, t_next - t)
        count[key(cmd)] += 1
    print(f"{events[-1][0] - events[0][0]:.0f} s traced, {len(events)} lines")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    for cmd, secs in total.most_common(n):
        print(f"{secs:7.1f} s {count[cmd]:5d}x  {cmd}")


if __name__ == "__main__":
    main()
