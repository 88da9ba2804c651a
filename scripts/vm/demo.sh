#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM for `make demo`.
. "$(dirname "$0")/lib.sh"

say "== Soft-RoCE fabric: two rxe devices over a veth pair"
fabric_single
rdma link show
say "== loading ipoib_cm"
load_module
dmesg | grep ipoib_cm
say "== unloading"
unload_module
dmesg | grep 'ipoib_cm' | tail -n 2
