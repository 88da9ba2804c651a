#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The admin guide documents every module parameter, sysfs file, debugfs
# file, ethtool -S counter and tracepoint.  The lists come from the
# sources; an item counts as documented when Documentation/admin-guide.rst
# has it as an inline literal (``name``) or as the first word of a line (a
# table row or a definition-list term).  Every module parameter must also
# state its default in its MODULE_PARM_DESC (what modinfo shows).
#
#   scripts/check-docs.sh [GUIDE]
#
# Prints each undocumented item and exits 1 if there is any.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

guide=${1:-$TOPDIR/Documentation/admin-guide.rst}

python3 - "$TOPDIR" "$guide" <<'PY'
import glob, os, re, sys

top, guide = sys.argv[1], sys.argv[2]
src = {os.path.basename(f): open(f).read()
       for f in glob.glob(os.path.join(top, "*.[ch]"))}
everything = "\n".join(src.values())

def array_strings(text, array):
    """The string literals of a C array's initializer."""
    m = re.search(r"\b%s\s*\[[^]]*\]\s*=\s*\{(.*?)\n\};" % array, text, re.S)
    if not m:
        sys.exit(f"check-docs: no initializer of {array} found")
    return re.findall(r'"([^"]+)"', m.group(1))

items = []   # (kind, name)
params = re.findall(r"\bmodule_param(?:_named|_cb)?\(\s*(\w+)\s*,", everything)
items += [("module parameter", p) for p in params]
for p in params:
    m = re.search(r"MODULE_PARM_DESC\(\s*%s\s*,(.*?)\);" % p, everything, re.S)
    if not m:
        items.append(("MODULE_PARM_DESC of module parameter", p))
    elif "default" not in m.group(1):
        print(f"no default in the description of module parameter: {p}")
        items.append(("!", p))

# ethtool -S, in ipoib_ethtool.c's order: UD, connected mode, drops.
counters = array_strings(src["ipoib_ethtool.c"], "ipoib_ud_stats")
counters += array_strings(src["ipoib_cm_state.c"], "ipoib_cm_stat_names")
counters += ["drop_" + d for d in array_strings(src["ipoib_frame.c"],
                                               "ipoib_drop_names")]
items += [("ethtool -S counter", c) for c in counters]

items += [("debugfs file", f) for f in
          re.findall(r'\bdebugfs_create_(?!dir\b)\w+\(\s*"([^"]+)"', everything)]
items += [("sysfs file", f) for f in
          re.findall(r"\bDEVICE_ATTR(?:_RW|_RO|_WO|_ADMIN_RW|_ADMIN_RO)?\(\s*(\w+)",
                     everything)]
items += [("tracepoint", t) for t in
          re.findall(r"\bTRACE_EVENT\(\s*(\w+)", everything) +
          re.findall(r"\bDEFINE_EVENT\(\s*\w+\s*,\s*(\w+)", everything)]

doc = open(guide).read()
literals = set(re.findall(r"``([^`]+)``", doc))
firsts = set()
for line in doc.splitlines():
    w = line.split()
    if w:
        firsts.add(w[0].strip(",:").strip("`"))

missing = 0
counts = {}
for kind, name in items:
    if kind == "!":
        missing += 1
        continue
    counts[kind] = counts.get(kind, 0) + 1
    if kind.startswith("MODULE_PARM_DESC"):
        print(f"no {kind}: {name}")
        missing += 1
    elif name not in literals and name not in firsts:
        print(f"undocumented {kind}: {name}")
        missing += 1
print("checked: " + ", ".join(f"{n} x {k}" for k, n in counts.items()))
for kind in ("module parameter", "ethtool -S counter", "debugfs file",
             "sysfs file", "tracepoint"):
    if not counts.get(kind):
        print(f"no {kind} found in the sources: the extraction is broken")
        missing += 1
print(f"{missing} problems ({os.path.relpath(guide, top)} and the "
      "parameter descriptions)")
sys.exit(1 if missing else 0)
PY
