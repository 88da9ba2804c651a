#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A QP that teardown has to leak, without the SRQ (a ring per QP): the case is in
# scripts/vm/cm-leak-lib.sh.
. "$(dirname "$0")/../cm-leak-lib.sh"

fabric_single
leak_round 0
say "cm-leak-nosrq: ok"
