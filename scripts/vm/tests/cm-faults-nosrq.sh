#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 1500
# Failures inside the CM handlers and the connection tasks, without the SRQ (a ring per QP):
# the cases are in scripts/vm/cm-faults-lib.sh.
. "$(dirname "$0")/../cm-faults-lib.sh"

fabric_single
round 0
say "cm-faults-nosrq: ok"
