#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A QP that teardown has to leak, with the SRQ: the case is in
# scripts/vm/cm-leak-lib.sh.
. "$(dirname "$0")/../cm-leak-lib.sh"

fabric_single
leak_round 1
say "cm-leak-srq: ok"
