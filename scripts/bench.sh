#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: connected mode against raw RC, datagram mode and a bare
# veth pair, on one rxe pair in one VM, with a report and a plot.
#
#   scripts/bench.sh
#
# Installs what it needs, builds the bench kernel (6.12 without the debug
# options, cached) and the module against it, boots one VM that runs
# scripts/vm/bench/run.sh, and writes out/bench/bench.{md,csv,png}
# (scripts/bench-report.py).  Environment: BENCH_SECS (seconds per
# bandwidth run, default 10), BENCH_PEERS (peers for the connection setup
# and memory measurements, default 16), BENCH_KILO (connections on one
# interface for part k, default 1000), BENCH_LAT_N (round trips of each
# latency case, default 5000), BENCH_HOPS_N (round trips of its traced
# run, default 500), BENCH_PARTS (default "a b c d k l m n", see
# scripts/vm/bench/run.sh).  A benchmark, not a test: nothing
# checks its numbers.

set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$TOPDIR"

OUT=$TOPDIR/out/bench
secs=${BENCH_SECS:-10}
peers=${BENCH_PEERS:-16}

bash scripts/install-deps.sh
log "building the bench kernel (cached in $CACHE; a first build takes 15-20 minutes)"
kdir=$(bash scripts/build-kernel.sh 6.12 bench)
bash scripts/build-module.sh "$kdir" "$TOPDIR/build/6.12-bench"
bash scripts/build-tools.sh "$kdir" "$TOPDIR/build/tools-bench" rrlat

rm -rf "$OUT"
mkdir -p "$OUT/vm"
log "running the benchmark in the VM (about 20 minutes under TCG)"
start=$SECONDS
# A no-SRQ receive ring is 16 MiB per accepted connection, and part k's
# thousand peer interfaces hold 1 MiB of receive buffers each: room.
bash scripts/vm-run.sh -k "$kdir" -o "$OUT/vm" -m 4G -t 3600 \
	-e IPOIB_CM_MODDIR="$TOPDIR/build/6.12-bench" \
	-e IPOIB_CM_TOOLDIR="$TOPDIR/build/tools-bench" \
	-e BENCH_LAT_N="${BENCH_LAT_N:-5000}" \
	-e BENCH_HOPS_N="${BENCH_HOPS_N:-500}" \
	-e BENCH_SECS="$secs" -e BENCH_PEERS="$peers" \
	-e BENCH_KILO="${BENCH_KILO:-1000}" \
	-e BENCH_PARTS="${BENCH_PARTS:-a b c d k l m n}" \
	-- scripts/vm/bench/run.sh ||
	die "the benchmark failed in the VM; see $OUT/vm/console.log"
log "VM done in $((SECONDS - start)) s"

python3 scripts/bench-report.py "$OUT/vm/raw.csv" "$OUT"
cp "$OUT"/vm/profile-*.txt "$OUT/" 2>/dev/null || true
cat "$OUT/bench.md"
log "report: $OUT/bench.md, $OUT/bench.csv, $OUT/bench.png"
