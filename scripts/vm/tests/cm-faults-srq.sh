#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 1500
# Failures inside the CM handlers and the connection tasks, with the SRQ:
# the cases are in scripts/vm/cm-faults-lib.sh.
. "$(dirname "$0")/../cm-faults-lib.sh"

fabric_single
round 1
say "cm-faults-srq: ok"
