#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The benchmark (scripts/bench.sh), inside one VM on the bench kernel.
# Every measurement is a line of $VMOUT/raw.csv (group,case,metric,value,
# unit); scripts/bench-report.py turns them into the table, the ratios and
# the plot on the host.
#
#   a) raw RC send bandwidth, ib_send_bw rxe0 -> rxe1, 2 KiB .. 64 KiB;
#   b) iperf3 TCP, 1 and 4 streams, over ipoib_cm: datagram mode (MTU
#      4092), connected mode (MTU 65520) with the SRQ and without (cm_srq=0);
#   c) iperf3 TCP over a bare veth pair (MTU 9000, what rxe runs on);
#   d) connection setup: first packet to a new peer until it arrived over
#      RC, one peer at a time and all peers at once;
#   e) memory per connection, SRQ and no-SRQ, 1 .. BENCH_PEERS peers;
#   f) guest CPU time per byte moved, for a) to c);
#   k) BENCH_KILO (default 1000) connections opened by one interface;
#   l) latency: 64-octet TCP request/response over veth, datagram and
#      connected mode, and raw RC and UD round trips under them;
#   m) 1, 2 and 4 TCP streams to each of 1 and 4 peers, SRQ and no-SRQ;
#   n) as k, 128 connections without the SRQ, at the default ring size:
#      the receive memory of idle opened and accepted ends (part of e).
#
# BENCH_SECS (default 10) is the length of each bandwidth run, BENCH_PEERS
# (default 16) the number of peers for d) and e), BENCH_LAT_N (default
# 5000) the round trips of each latency case, BENCH_HOPS_N (default 500)
# those of its traced run.
. "$(dirname "$0")/../lib.sh"

SECS=${BENCH_SECS:-10}
PEERS=${BENCH_PEERS:-16}
KILO=${BENCH_KILO:-1000}
LAT_N=${BENCH_LAT_N:-5000}
HOPS_N=${BENCH_HOPS_N:-500}
HERE=$(cd "$(dirname "$0")" && pwd)
TOOLDIR=${IPOIB_CM_TOOLDIR:?IPOIB_CM_TOOLDIR is not set}
RAW=$VMOUT/raw.csv
echo "group,case,metric,value,unit" > "$RAW"

# BENCH_PARTS (default "a b c d k l m n") picks the parts to run; d
# covers e.
part() {
	[[ " ${BENCH_PARTS:-a b c d k l m n} " == *" $1 "* ]]
}

rec() {
	echo "$1,$2,$3,$4,$5" >> "$RAW"
	say "result: $1 $2 $3 = $4 $5"
}

# Busy and total CPU ticks of the whole guest (all CPUs), from /proc/stat.
cpu_snap() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat
}

# rec_cpu GROUP CASE BYTES "BUSY0 TOTAL0" "BUSY1 TOTAL1": CPU per byte and
# utilisation (100% = every vCPU busy) between two snapshots.
rec_cpu() {
	local b0 t0 b1 t1 hz
	read -r b0 t0 <<< "$4"
	read -r b1 t1 <<< "$5"
	hz=$(getconf CLK_TCK)
	rec "$1" "$2" cpu_ns_per_byte \
		"$(python3 -c "print(f'{($b1 - $b0) * 1e9 / $hz / max($3, 1):.3f}')")" ns/B
	rec "$1" "$2" cpu_busy \
		"$(python3 -c "print(f'{100 * ($b1 - $b0) / max($t1 - $t0, 1):.1f}')")" %
}

# iperf3 TCP: run_iperf GROUP CASE SERVER_NS CLIENT_NS DEST STREAMS
run_iperf() {
	local group=$1 case=$2 sns=$3 cns=$4 dest=$5 streams=$6 c0 c1 out

	ip netns exec "$sns" timeout $((SECS * 4 + 120)) iperf3 -s -1 -J \
		> /tmp/iperf-s.json 2>&1 &
	local spid=$!
	wait_listening "$sns" 5201
	c0=$(cpu_snap)
	ip netns exec "$cns" timeout $((SECS * 4 + 60)) iperf3 -c "$dest" \
		-t "$SECS" -P "$streams" -J > /tmp/iperf-c.json ||
		{ tail -n 20 /tmp/iperf-c.json; cm_dump; fail "iperf3 $case"; }
	c1=$(cpu_snap)
	wait $spid || true
	cp /tmp/iperf-c.json "$VMOUT/iperf-$case.json"
	out=$(python3 - /tmp/iperf-c.json <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["end"]
r = e["sum_received"]
print(f"{r['bits_per_second'] / 1e6:.1f} {r['bytes']} {e['sum_sent'].get('retransmits', 0)}")
PY
)
	read -r mbps bytes retr <<< "$out"
	rec "$group" "$case" throughput "$mbps" Mbit/s
	rec "$group" "$case" bytes "$bytes" B
	rec "$group" "$case" retransmits "$retr" segments
	rec_cpu "$group" "$case" "$bytes" "$c0" "$c1"
	LAST_BYTES=$bytes
}

# Both IPoIB ends in connected mode; checks the traffic went over RC.
connected_runs() {
	local tag=$1 p before after n0

	for p in 1 4; do
		before=$(cm_stat rxe0 rc_tx_bytes)
		n0=$(rxe_stat rxe1 send_rnr_err)
		run_iperf tcp "$tag-P$p" ns1 ns0 192.0.2.2 $p
		after=$(cm_stat rxe0 rc_tx_bytes)
		[ $((after - before)) -ge "$LAST_BYTES" ] ||
			fail "$tag: only $((after - before)) of $LAST_BYTES bytes over RC"
		# RNR NAKs the receiving end sent: a send that met no receive
		# posted (with RNR retry 7 it is sent again, never lost).
		rec tcp "$tag-P$p" rnr_naks $(($(rxe_stat rxe1 send_rnr_err) - n0)) n
		rec tcp "$tag-P$p" rnr_exhausted "$(rxe_stat rxe0 retry_rnr_exceeded_err)" n
	done
}

# conn_posted RDMADEV DIR: receives posted on its first DIR connection.
conn_posted() {
	cm_conns "$1" | awk -v d="$2" '$3 == d {
		for (i = 1; i < NF; i++) if ($i == "rx_posted") { print $(i + 1); exit } }'
}

# Grow host 1's accepted no-SRQ ring to recv_queue_size.  A ring grows
# only when its receiver uses more than half of it in one busy spell,
# which TCP's window does not make happen (a stream with host 1's NAPI
# held stopped at 136 of 256): with the NAPI held, datagrams come from
# host 0 until every receive posted is used (the rest wait in RNR
# retries), and the release finds them all at once, doubling the ring.
grow_to_full() {
	local ring round

	ring=$(cat /sys/module/ipoib_cm/parameters/recv_queue_size)
	for round in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(conn_posted rxe1 passive)" -lt $((ring - 2)) ] || break
		napi_hold ns1 "$IB1"
		udp_flood ns0 192.0.2.2 $((ring + 16)) ||
			{ napi_release; fail "a flood into host 1 failed"; }
		sleep 2
		napi_release
		sleep 2
		say "growing host 1's ring: round $round, $(conn_posted rxe1 passive) of $ring"
	done
	[ "$(conn_posted rxe1 passive)" -ge $((ring - 2)) ] ||
		fail "host 1's ring did not grow to $ring: $(conn_posted rxe1 passive)"
}

# conn_rx_bytes RDMADEV DIR: receive-buffer bytes of its first DIR connection.
conn_rx_bytes() {
	cm_conns "$1" | awk -v d="$2" '$3 == d {
		for (i = 1; i < NF; i++) if ($i == "rx_buf_bytes") { print $(i + 1); exit } }'
}

# Memory: Slab, memory in use (not free, not page cache) and vmalloc, kB;
# then the receive-buffer bytes reported by every interface's connections
# and the number of connection ends.
mem_snap() {
	local bufs conns

	# One awk over every interface's table: part k has a thousand.
	read -r bufs conns < <(cat /sys/kernel/debug/ipoib_cm/*/connections 2>/dev/null |
		awk '/^#/ { next }
		     { n++; for (i = 1; i < NF; i++) if ($i == "rx_buf_bytes") s += $(i + 1) }
		     END { print s + 0, n + 0 }')
	awk -v bufs=$bufs -v conns=$conns '
		{ m[$1] = $2 }
		END { print m["Slab:"], m["MemTotal:"] - m["MemFree:"] - m["Buffers:"] - m["Cached:"],
			    m["VmallocUsed:"], bufs, conns }' /proc/meminfo
}

# Where the time goes (perf record -a, one iperf3 stream ns0 -> ns1), to
# $VMOUT/profile-NAME.txt; not a measurement, perf costs CPU too.  Only if
# perf runs here.
# perf_runs: perf can sample the whole guest here.
perf_runs() {
	perf record -o /tmp/perf.data -e cpu-clock -a -- true > /dev/null 2>&1
}

# perf_sample OUT: after 2 s of the load already started, SECS seconds
# of the whole guest, by symbol and by object, to OUT; its head printed.
perf_sample() {
	sleep 2
	perf record -o /tmp/perf.data -e cpu-clock -F 499 -a -g -- \
		sleep "$SECS" > /dev/null 2>&1 || true
	perf report -i /tmp/perf.data --stdio --no-children --sort sym \
		--percent-limit 0.5 -g none 2>/dev/null | grep -v '^$' > "$1" || true
	perf report -i /tmp/perf.data --stdio --no-children --sort dso \
		-g none 2>/dev/null | grep -v '^$' >> "$1" || true
	grep -v '^#' "$1" | sed -n 1,25p
}

profile() {
	local name=$1 spid cpid out=$VMOUT/profile-$1.txt

	perf_runs || return 0
	say "== profile: $name, 1 stream"
	in1 iperf3 -s -1 > /dev/null 2>&1 &
	spid=$!
	wait_listening ns1 5201
	in0 iperf3 -c 192.0.2.2 -t $((SECS + 4)) > /dev/null &
	cpid=$!
	perf_sample "$out"
	wait $cpid || true
	wait $spid || true
}

# The link address of host I's interface.
hwaddr_of() {
	local ifname=IB$1

	ip -n ns$1 -j link show "${!ifname}" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])'
}

say "== bench: ${SECS}s per bandwidth run, $PEERS peers; kernel $(uname -r)"
rec meta run secs "$SECS" s
rec meta run peers "$PEERS" hosts
rec meta run vcpus "$(nproc)" cpus
rec meta run lat_n "$LAT_N" round_trips
rec meta run hops_n "$HOPS_N" round_trips
# Setup times below are only as fine as this clock (jiffies: 4 ms).
rec meta run clocksource \
	"$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" name

# a) Raw RC: ib_send_bw from rxe0 to rxe1.  The QPs are connected through
# perftest's own TCP exchange on the loopback (both devices are in this
# network namespace); GID index 0 is rxe's RoCE v2 GID from the MAC.  Both
# ends sleep on completion events (-e) as a kernel ULP does: polling ends
# would take the vCPU from rxe's own work.  perftest's own timing needs a
# CPU clock it can calibrate, which it cannot under emulation (it reports
# 0 MB/s), so the rate is taken from rxe1's received-packet counter over
# SECS seconds of steady traffic, each packet carrying min(size, 4096)
# octets.
RXE1_PKTS=/sys/class/infiniband/rxe1/ports/1/hw_counters/rcvd_pkts

# rc_measure SIZE CASE PORT: one ib_send_bw rate, recorded as rc CASE.
rc_measure() {
	local size=$1 case=$2 port=$3 spid cpid p0 p1 t0 t1 c0 c1 bytes

	ib_send_bw -d rxe1 -x 0 -m 4096 -F -e -s "$size" -n 100000000 \
		-p "$port" > /tmp/ib-s.txt 2>&1 &
	spid=$!
	wait_for 60 "ib_send_bw listening" sh -c "ss -ltn | grep -q ':$port '"
	ib_send_bw -d rxe0 -x 0 -m 4096 -F -e -s "$size" -n 100000000 \
		-p "$port" 127.0.0.1 > /tmp/ib-c.txt 2>&1 &
	cpid=$!
	p0=$(cat $RXE1_PKTS)
	wait_for 60 "ib_send_bw traffic" sh -c "[ \$(cat $RXE1_PKTS) -gt $((p0 + 64)) ]"
	sleep 1
	p0=$(cat $RXE1_PKTS)
	t0=$(date +%s.%N)
	c0=$(cpu_snap)
	sleep "$SECS"
	p1=$(cat $RXE1_PKTS)
	t1=$(date +%s.%N)
	c1=$(cpu_snap)
	kill -0 $cpid 2>/dev/null ||
		{ cat /tmp/ib-c.txt /tmp/ib-s.txt; fail "ib_send_bw -s $size ended early"; }
	kill $cpid $spid 2>/dev/null || true
	wait $cpid $spid 2>/dev/null || true
	cat /tmp/ib-c.txt >> "$VMOUT/ib_send_bw.txt"
	bytes=$(((p1 - p0) * (size < 4096 ? size : 4096)))
	rec rc "$case" throughput \
		"$(python3 -c "print(f'{$bytes * 8 / ($t1 - $t0) / 1e6:.1f}')")" Mbit/s
	rec rc "$case" bytes "$bytes" B
	rec_cpu rc "$case" "$bytes" "$c0" "$c1"
}

bench_rc() {
	local port=18515 size

	say "== a) raw RC send bandwidth (ib_send_bw)"
	[ -r $RXE1_PKTS ] || fail "no $RXE1_PKTS"
	for size in 2048 4096 8192 16384 32768 65536; do
		rc_measure $size "send-$size" $port
		port=$((port + 1))
	done
}

# The reference path: a veth pair like the one rxe runs on (MTU 9000),
# 192.0.2.101 in nsv0 and 192.0.2.102 in nsv1.
veth_up() {
	ip netns add nsv0
	ip netns add nsv1
	ip link add vr0 netns nsv0 mtu 9000 type veth peer name vr1 netns nsv1 mtu 9000
	ip -n nsv0 addr add 192.0.2.101/24 dev vr0
	ip -n nsv1 addr add 192.0.2.102/24 dev vr1
	ip -n nsv0 link set vr0 up
	ip -n nsv1 link set vr1 up
	ip -n nsv0 link set lo up
	ip -n nsv1 link set lo up
	wait_for 30 "veth reference up" ip netns exec nsv0 ping -c 1 -W 1 192.0.2.102
}

veth_down() {
	ip netns del nsv0
	ip netns del nsv1
}

# c) The reference: TCP over that veth pair.
bench_veth() {
	say "== c) TCP over a bare veth pair (MTU 9000)"
	veth_up
	for p in 1 4; do
		run_iperf tcp "veth-P$p" nsv1 nsv0 192.0.2.102 $p
	done
	veth_down
}

# b) ipoib_cm: datagram mode, then connected mode with the SRQ.
bench_ipoib() {
	say "== b) iperf3 over ipoib_cm: datagram, connected (SRQ)"
	load_module
	hosts_up
	in0 ping -c 2 -W 10 192.0.2.2 > /dev/null || fail "ping in datagram mode"
	rec meta datagram mtu "$(link_mtu ns0 "$IB0")" B
	for p in 1 4; do
		run_iperf tcp "datagram-P$p" ns1 ns0 192.0.2.2 $p
	done
	profile datagram
	set_mode ns0 "$IB0" connected
	set_mode ns1 "$IB1" connected
	in0 ip neigh flush dev "$IB0"
	in1 ip neigh flush dev "$IB1"
	in0 ping -c 2 -W 10 192.0.2.2 > /dev/null || fail "ping in connected mode"
	rec meta connected mtu "$(link_mtu ns0 "$IB0")" B
	grep -q '^# connected mode, SRQ' "$(cm_debugfs rxe0)/connections" ||
		fail "not connected mode with an SRQ: $(head -n 1 "$(cm_debugfs rxe0)/connections")"
	connected_runs conn-srq
	# The machine is shared: raw RC at 64 KiB again, right after, on the
	# same devices (ipoib_cm loaded, its interfaces idle).
	! part a || rc_measure 65536 send-65536-again 18600

	profile connected
	unload_module
	hosts_down

	# b) Connected mode without the SRQ.
	say "== b) iperf3 over ipoib_cm: connected (no SRQ)"
	load_module default_mode=connected cm_srq=0
	hosts_up
	in0 ping -c 2 -W 10 192.0.2.2 > /dev/null || fail "ping in connected mode, no SRQ"
	grep -q '^# connected mode, per-QP' "$(cm_debugfs rxe0)/connections" ||
		fail "not connected mode without SRQ: $(head -n 1 "$(cm_debugfs rxe0)/connections")"
	# Host 1's accepted QP is new: it begins with 16 receives and grows
	# only when its receiver falls behind (rnr_naks shows whether it did).
	# The last run measures one stream again over the full ring, which is
	# what posting the whole ring at the REP gave: the ring is grown to it
	# first by holding host 1's NAPI under a stream a few seconds at a
	# time (napi_hold), and the run follows at once.
	connected_runs conn-nosrq
	grow_to_full
	rec mem nosrq-full-ring rx_posted "$(conn_posted rxe1 passive)" n
	n0=$(rxe_stat rxe1 send_rnr_err)
	run_iperf tcp conn-nosrq-full-P1 ns1 ns0 192.0.2.2 1
	rec tcp conn-nosrq-full-P1 rnr_naks $(($(rxe_stat rxe1 send_rnr_err) - n0)) n
	# e) The receive memory of the connection that carried the streams
	# (host 1 accepted it), right after them and once it has been quiet
	# for a minute: receives posted cannot be taken back, so a grown
	# ring that falls quiet is closed (nosrq_rx_reclaimed), and what
	# host 1 accepted from host 0 then holds nothing.
	rec mem nosrq-loaded rx_buf_bytes "$(conn_rx_bytes rxe1 passive)" B
	sleep 60
	quiet=$(conn_rx_bytes rxe1 passive)
	rec mem nosrq-quiet-60s rx_buf_bytes "${quiet:-0}" B
	rec mem nosrq-quiet-60s reclaimed "$(cm_stat rxe1 nosrq_rx_reclaimed)" n
	# The pair again, later in the run, so that the ratio from both
	# pairs is less the machine's drift: one stream on the connection
	# dialled anew after the reclaim (its ring from 16), then over that
	# ring grown full.
	run_iperf tcp conn-nosrq-P1-again ns1 ns0 192.0.2.2 1
	rec mem nosrq-P1-again rx_posted "$(conn_posted rxe1 passive)" n
	grow_to_full
	run_iperf tcp conn-nosrq-full-P1-again ns1 ns0 192.0.2.2 1
	unload_module
	hosts_down
}

# l) Latency: request/response round trips of 64 octets, one after the
# other, on every path in one run.  TCP (rrlat, TCP_NODELAY) over a bare
# veth pair, over datagram mode and over connected mode with the SRQ and
# without; and the transports under them, raw RC and raw UD between rxe0
# and rxe1 (ibv_rc_pingpong and ibv_ud_pingpong, sleeping on completion
# events as a kernel ULP does; their round trip is their usec/iter).
# Each TCP case's connection is made before its timing starts: the
# first-packet latency to a new peer, setup included, is part d's.
#
# Then each case runs again, HOPS_N round trips under the kernel's
# tracepoints, for what a round trip costs in hand-offs: context
# switches, work items run (rdma_rxe does its requester, responder and
# completer work in a workqueue), IPIs and ksoftirqd wake-ups, per round
# trip.  These counts do not depend on how busy the host is, the times
# above do; the traced runs are not timed.
TRACE=/sys/kernel/tracing
HOPS_EVENTS="sched/sched_switch sched/sched_wakeup ipi/ipi_send_cpu
	workqueue/workqueue_execute_start"

hops_events() {
	local e

	for e in $HOPS_EVENTS; do
		echo "$1" > "$TRACE/events/$e/enable"
	done
}

hops_start() {
	echo 0 > "$TRACE/tracing_on"
	echo 16384 > "$TRACE/buffer_size_kb"
	echo > "$TRACE/trace"
	hops_events 1
	echo 1 > "$TRACE/tracing_on"
}

# hops_stop CASE: per round trip of the HOPS_N just traced.
hops_stop() {
	local case=$1 counts

	echo 0 > "$TRACE/tracing_on"
	hops_events 0
	# A full buffer drops events: the counts would be low.
	grep -q '^# entries-in-buffer/entries-written: \([0-9]*\)/\1 ' "$TRACE/trace" ||
		fail "hops $case: the trace buffer overflowed: $(grep entries-in-buffer "$TRACE/trace")"
	counts=$(awk -v n="$HOPS_N" '
		/ sched_switch: / { cs++ }
		/ sched_wakeup: comm=ksoftirqd/ { sirq++ }
		/ ipi_send_cpu: / { ipi++ }
		/ workqueue_execute_start: / { wq++ }
		END { printf "%.2f %.2f %.2f %.2f\n", cs / n, wq / n, ipi / n, sirq / n }' \
		"$TRACE/trace")
	echo > "$TRACE/trace"
	read -r cs wq ipi sirq <<< "$counts"
	rec lat "$case" ctx_switches_per_rt "$cs" n
	rec lat "$case" work_items_per_rt "$wq" n
	rec lat "$case" ipis_per_rt "$ipi" n
	rec lat "$case" ksoftirqd_wakeups_per_rt "$sirq" n
}

# traced CASE COMMAND...: COMMAND (a latency run) under hops_start and
# hops_stop CASE.
traced() {
	local case=$1 out
	shift

	hops_start
	out=$("$@") || fail "latency $case, traced: $out"
	hops_stop "$case"
}

# rrlat_run SERVER_NS CLIENT_NS DEST ARGS...: one rrlat client run.
rrlat_run() {
	local out spid

	ip netns exec "$1" timeout 300 "$TOOLDIR/rrlat" -l 7301 &
	spid=$!
	wait_listening "$1" 7301
	out=$(ip netns exec "$2" timeout 300 "$TOOLDIR/rrlat" "${@:4}" "$3" 7301) ||
		fail "rrlat to $3: $out"
	wait $spid || fail "rrlat server in $1"
	echo "$out"
}

# lat_tcp CASE SERVER_NS CLIENT_NS DEST
lat_tcp() {
	local case=$1 out

	out=$(rrlat_run "$2" "$3" "$4" -n "$LAT_N") || fail "latency $case: $out"
	read -r _ mean p50 p99 min _ <<< "$out"
	rec lat "$case" rtt_mean "$mean" us
	rec lat "$case" rtt_p50 "$p50" us
	rec lat "$case" rtt_p99 "$p99" us
	rec lat "$case" rtt_min "$min" us
	traced "$case" rrlat_run "$2" "$3" "$4" -n "$HOPS_N" -w 0
}

# pingpong PROGRAM PORT N: N round trips from rxe0 to rxe1; prints the
# client's usec/iter.
pingpong() {
	local prog=$1 port=$2 us spid

	"$prog" -d rxe1 -g 0 -e -s 64 -n "$3" -p "$port" > /tmp/pp-s.txt 2>&1 &
	spid=$!
	wait_for 60 "$prog listening" sh -c "ss -ltn | grep -q ':$port '"
	timeout 300 "$prog" -d rxe0 -g 0 -e -s 64 -n "$3" -p "$port" \
		127.0.0.1 > /tmp/pp-c.txt 2>&1 ||
		{ cat /tmp/pp-c.txt /tmp/pp-s.txt; fail "$prog"; }
	wait $spid || { cat /tmp/pp-s.txt; fail "$prog server"; }
	us=$(sed -n 's/.* iters in .* = \([0-9.]*\) usec\/iter.*/\1/p' /tmp/pp-c.txt)
	[ -n "$us" ] || { cat /tmp/pp-c.txt; fail "$prog printed no usec/iter"; }
	echo "$us"
}

# lat_verbs CASE PROGRAM PORT: a pingpong from rxe0 to rxe1.
lat_verbs() {
	local us

	us=$(pingpong "$2" "$3" "$LAT_N") || fail "latency $1: $us"
	rec lat "$1" rtt_mean "$us" us
	traced "$1" pingpong "$2" "$3" "$HOPS_N"
}

# lat_over_rc CASE: lat_tcp between hosts 0 and 1, which must go over RC.
lat_over_rc() {
	local before

	before=$(cm_stat rxe0 rc_tx_bytes)
	lat_tcp "$1" ns1 ns0 192.0.2.2
	[ $(($(cm_stat rxe0 rc_tx_bytes) - before)) -ge $((LAT_N * 64)) ] ||
		fail "latency $1: the round trips did not go over RC"
}

bench_latency() {
	say "== l) latency: 64-octet round trips"
	lat_verbs raw-rc ibv_rc_pingpong 18700
	lat_verbs raw-ud ibv_ud_pingpong 18701
	veth_up
	lat_tcp veth nsv1 nsv0 192.0.2.102
	veth_down

	load_module
	hosts_up
	in0 ping -c 2 -W 10 192.0.2.2 > /dev/null || fail "ping in datagram mode"
	lat_tcp datagram ns1 ns0 192.0.2.2
	set_mode ns0 "$IB0" connected
	set_mode ns1 "$IB1" connected
	in0 ping -c 2 -W 10 192.0.2.2 > /dev/null || fail "ping in connected mode"
	lat_over_rc conn-srq
	unload_module
	hosts_down

	load_module default_mode=connected cm_srq=0
	hosts_up
	in0 ping -c 2 -W 10 192.0.2.2 > /dev/null || fail "ping in connected mode, no SRQ"
	lat_over_rc conn-nosrq
	unload_module
	hosts_down
}

# m) Scaling with streams and peers: host 0 sends to 1 and to 4 peers at
# once, 1, 2 and 4 TCP streams to each (one iperf3 client per peer), in
# connected mode with the SRQ and without.  Every host has its own rxe
# device on one bridge, so every packet costs rxe's work on both ends in
# this guest, as in part b.
SCALE_PEERS=4

# scale_sum FILE...: the iperf3 clients' received Mbit/s and bytes, summed.
scale_sum() {
	python3 - "$@" <<'PY'
import json, sys
bps = b = 0
for p in sys.argv[1:]:
    r = json.load(open(p))["end"]["sum_received"]
    bps += r["bits_per_second"]
    b += r["bytes"]
print(f"{bps / 1e6:.1f} {b}")
PY
}

# scale_rnr PEERS: RNR NAKs sent by the peers' devices so far.
scale_rnr() {
	local i n=0

	for ((i = 1; i <= $1; i++)); do
		n=$((n + $(rxe_stat rxe$i send_rnr_err)))
	done
	echo $n
}

# scale_servers PEERS: an iperf3 server for one client in each peer's
# namespace, listening; their PIDs in SERVER_PIDS.
scale_servers() {
	local i

	SERVER_PIDS=()
	for ((i = 1; i <= $1; i++)); do
		ip netns exec ns$i timeout $((SECS * 4 + 120)) \
			iperf3 -s -1 > /dev/null 2>&1 &
		SERVER_PIDS+=($!)
	done
	for ((i = 1; i <= $1; i++)); do
		wait_listening ns$i 5201
	done
}

# scale_cell BACKEND PEERS STREAMS
scale_cell() {
	local c=$1-peers$2-streams$3 i before n0 c0 c1 mbps bytes pids=()

	scale_servers "$2"
	before=$(cm_stat rxe0 rc_tx_bytes)
	n0=$(scale_rnr "$2")
	c0=$(cpu_snap)
	for ((i = 1; i <= $2; i++)); do
		in0 timeout $((SECS * 4 + 60)) iperf3 -c 192.0.2.$((i + 1)) \
			-t "$SECS" -P "$3" -J > /tmp/scale-$i.json &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || { cm_dump; fail "iperf3 $c"; }
	done
	c1=$(cpu_snap)
	wait
	read -r mbps bytes <<< "$(scale_sum /tmp/scale-*.json)"
	rm -f /tmp/scale-*.json
	[ $(($(cm_stat rxe0 rc_tx_bytes) - before)) -ge "$bytes" ] ||
		fail "$c: not all of it went over RC"
	rec scale "$c" throughput "$mbps" Mbit/s
	rec scale "$c" bytes "$bytes" B
	rec_cpu scale "$c" "$bytes" "$c0" "$c1"
	rec scale "$c" rnr_naks $(($(scale_rnr "$2") - n0)) n
}

# Where the time goes with one stream to each of the 4 peers (perf, as
# profile() does), to $VMOUT/profile-scale.txt.
profile_scale() {
	local i pids

	perf_runs || return 0
	say "== profile: 1 stream to each of $SCALE_PEERS peers"
	scale_servers $SCALE_PEERS
	pids=("${SERVER_PIDS[@]}")
	for ((i = 1; i <= SCALE_PEERS; i++)); do
		in0 iperf3 -c 192.0.2.$((i + 1)) -t $((SECS + 4)) > /dev/null &
		pids+=($!)
	done
	perf_sample "$VMOUT/profile-scale.txt"
	wait "${pids[@]}" || true
}

bench_scale() {
	local backend peers s i

	fabric_bridge $((SCALE_PEERS + 1))
	for backend in srq nosrq; do
		say "== m) streams x peers, connected mode, $backend"
		if [ $backend = srq ]; then
			load_module default_mode=connected
		else
			load_module default_mode=connected cm_srq=0
		fi
		for ((i = 0; i <= SCALE_PEERS; i++)); do host_up $i; done
		for ((i = 0; i <= SCALE_PEERS; i++)); do host_wait $i; done
		for ((i = 1; i <= SCALE_PEERS; i++)); do
			in0 ping -c 2 -W 10 192.0.2.$((i + 1)) > /dev/null ||
				fail "ping peer $i"
		done
		for peers in 1 $SCALE_PEERS; do
			for s in 1 2 4; do
				scale_cell $backend $peers $s
			done
		done
		[ $backend != srq ] || profile_scale
		rec scale "$backend" rnr_exhausted \
			"$(rxe_stat rxe0 retry_rnr_exceeded_err)" n
		unload_module
		hosts_down
	done
	fabric_bridge_del
}

# d) and e): host 0 and PEERS peers, every one on its own rxe device on a
# bridge.  Each peer has a blackhole route back to host 0 so that nothing
# it sends (ICMP errors) opens connections of its own: what is measured
# is host 0's connections only.
bench_peers() {
	fabric_bridge $((PEERS + 1))
	for backend in srq nosrq; do
		say "== d, e) connection setup and memory: $backend, $PEERS peers"
		if [ $backend = srq ]; then
			load_module
		else
			load_module cm_srq=0
		fi
		for ((i = 0; i <= PEERS; i++)); do host_up $i; done
		for ((i = 0; i <= PEERS; i++)); do host_wait $i; done
		sleep 2
		read -r slab0 used0 vm0 _ _ <<< "$(mem_snap)"
		for ((i = 0; i <= PEERS; i++)); do
			ifname=IB$i
			set_mode ns$i "${!ifname}" connected
		done
		sleep 2
		read -r slab1 used1 vm1 _ _ <<< "$(mem_snap)"
		rec mem "$backend-mode" used_per_interface \
			$(((used1 - used0) / (PEERS + 1))) kB
		rec mem "$backend-mode" slab_per_interface \
			$(((slab1 - slab0) / (PEERS + 1))) kB

		a0=$(hwaddr_of 0)
		dests=()
		for ((i = 1; i <= PEERS; i++)); do
			ifname=IB$i
			in0 ip neigh replace 192.0.2.$((i + 1)) lladdr "$(hwaddr_of $i)" \
				dev "$IB0" nud permanent
			ip -n ns$i neigh replace 192.0.2.1 lladdr "$a0" dev "${!ifname}" \
				nud permanent
			ip -n ns$i route add blackhole 192.0.2.1/32
			dests+=("192.0.2.$((i + 1)):rxe$i")
		done

		# One peer at a time: setup latency and memory after each.
		read -r slab0 used0 vm0 _ _ <<< "$(mem_snap)"
		for ((i = 1; i <= PEERS; i++)); do
			python3 "$HERE/connprobe.py" ns0 rxe0 "${dests[i - 1]}" \
				> /tmp/probe.txt || { cat /tmp/probe.txt; cm_dump; fail "probe peer $i"; }
			read -r _ rx live <<< "$(tail -n 1 /tmp/probe.txt)"
			rec setup "$backend-serial-$i" first_packet_to_rc_rx "$rx" ms
			rec setup "$backend-serial-$i" first_packet_to_live "$live" ms
			sleep 1
			read -r slab used vm bufs conns <<< "$(mem_snap)"
			rec mem "$backend-conns-$i" connection_ends "$conns" ends
			rec mem "$backend-conns-$i" used_delta $((used - used0)) kB
			rec mem "$backend-conns-$i" slab_delta $((slab - slab0)) kB
			rec mem "$backend-conns-$i" vmalloc_delta $((vm - vm0)) kB
			rec mem "$backend-conns-$i" rx_buf_bytes "$bufs" B
		done
		cat "$(cm_debugfs rxe0)/connections" "$(cm_debugfs rxe1)/connections"
		if [ $backend = nosrq ]; then
			rec mem nosrq-opened-idle rx_buf_bytes "$(cm_conns rxe0 |
				awk '$3 == "active" { for (i = 1; i < NF; i++) if ($i == "rx_buf_bytes") print $(i + 1); exit }')" B
			rec mem nosrq-accepted rx_buf_bytes "$(cm_conns rxe1 |
				awk '$3 == "passive" { for (i = 1; i < NF; i++) if ($i == "rx_buf_bytes") print $(i + 1); exit }')" B
		fi

		# Every connection closed (host 0 leaves connected mode and comes
		# back), then all peers at once.
		set_mode ns0 "$IB0" datagram
		set_mode ns0 "$IB0" connected
		wait_for 60 "all connections closed" sh -c \
			"! cat /sys/kernel/debug/ipoib_cm/*/connections | grep -qv '^#'"
		python3 "$HERE/connprobe.py" ns0 rxe0 "${dests[@]}" > /tmp/probe.txt ||
			{ cat /tmp/probe.txt; cm_dump; fail "probe all peers"; }
		cat /tmp/probe.txt
		read -r _ rx live <<< "$(tail -n 1 /tmp/probe.txt)"
		rec setup "$backend-burst-$PEERS" first_packet_to_rc_rx "$rx" ms
		rec setup "$backend-burst-$PEERS" first_packet_to_live "$live" ms
		rec setup "$backend-burst-$PEERS" conns_per_s \
			"$(python3 -c "print(f'{$PEERS * 1000 / $rx:.1f}')")" conn/s
		unload_module
		hosts_down
	done
	fabric_bridge_del
}

# k) KILO connections on one interface: host 0 (rxe0, in ns0) sends one
# UDP datagram to each of KILO peers, then another over the connections
# that opened (kiloprobe.py).  The peers are interfaces on further rxe
# devices of the bridge, each device's own and up to 55 children of it:
# rxe lets at most 56 QPs attach to one multicast group, and every
# interface joins the broadcast group.  Small rings (16 receives per
# interface) keep the peers' memory in bounds; idle connections stay.
bench_kilo() {
	local KILO=$1 backend=$2 tag=$2-$1 pace=${3:-0}
	local per=56 devs i j n=0 ifname addr d qpn slab0 used0 slab1 used1 t0 ppid
	local -A pdir=() prdev=()

	devs=$(((KILO + per - 1) / per))
	say "== $KILO $backend connections on one interface: peers on $devs rxe devices"
	fabric_bridge $((devs + 1))
	if [ "$backend" = srq ]; then
		load_module default_mode=connected recv_queue_size=16 \
			send_queue_size=16 cm_idle_timeout=0
	else
		# The rings as users have them: what idle connections hold.
		load_module default_mode=connected cm_srq=0 cm_idle_timeout=0
	fi
	host_up 0
	host_wait 0
	# The peers stay in init_net, quiet: no IPv6 of their own (no
	# neighbour discovery or MLD from a thousand interfaces).
	sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	t0=$SECONDS
	: > /tmp/kilo-links
	: > /tmp/kilo-children
	for ((i = 1; i <= devs; i++)); do
		ifname=$(ipoib_if_of rxe$i) || fail "no interface on rxe$i"
		sysctl -qw net.ipv6.conf."$ifname".disable_ipv6=1
		echo "link set $ifname up" >> /tmp/kilo-links
		pdir[$ifname]=rxe$i-1
		n=$((n + 1))
		for ((j = 1; j < per && n < KILO; j++)); do
			echo "link add link $ifname name k${i}_$j type ipoib mode connected" \
				>> /tmp/kilo-children
			echo "link set k${i}_$j up" >> /tmp/kilo-links
			prdev[k${i}_$j]=rxe$i
			n=$((n + 1))
		done
	done
	ip -batch /tmp/kilo-children || fail "creating the children"
	ip -batch /tmp/kilo-links || fail "setting the peers up"
	rec kilo "$tag" peers_created_s $((SECONDS - t0)) s
	wait_for 600 "carrier on every peer" sh -c \
		"! ip -o link show | grep -E ' (ib[0-9]+|k[0-9]+_[0-9]+)[:@]' | grep -v LOWER_UP | grep -q ."
	rec kilo "$tag" peers_up_s $((SECONDS - t0)) s

	# Host 0 reaches peer N at 2001:db8:1::N, its link address static.
	in0 ip -6 route add 2001:db8:1::/64 dev "$IB0"
	: > /tmp/kilo-neigh
	: > /tmp/kilo-dests
	i=0
	while read -r ifname addr; do
		[ "$ifname" = "$IB0" ] && continue
		i=$((i + 1))
		printf 'neigh replace 2001:db8:1::%x lladdr %s dev %s nud permanent\n' \
			$i "$addr" "$IB0" >> /tmp/kilo-neigh
		if [ -n "${pdir[$ifname]:-}" ]; then
			d=${pdir[$ifname]}
		else
			# A child: <ibdev>-1.<P_Key>.<UD QPN of its address>.
			qpn=${addr:3:8}
			d=${prdev[$ifname]}-1.ffff.${qpn//:/}
		fi
		printf '2001:db8:1::%x %s\n' $i "$d" >> /tmp/kilo-dests
	done < <(ip -j link show | python3 -c '
import json, sys
for l in json.load(sys.stdin):
    if l.get("link_type") == "infiniband":
        print(l["ifname"], l["address"])')
	[ "$i" = "$KILO" ] || fail "$i peers, not $KILO"
	ip -n ns0 -batch /tmp/kilo-neigh || fail "host 0's neighbours"

	sleep 2
	read -r slab0 used0 _ _ _ <<< "$(mem_snap)"
	KILO_PACE_MS=$pace python3 "$HERE/kiloprobe.py" ns0 rxe0-1 /tmp/kilo-dests > /tmp/kilo.txt ||
		{ cat /tmp/kilo.txt; fail "kiloprobe.py"; }
	cat /tmp/kilo.txt
	if [ "$(awk '$1 == "live" { print $2 }' /tmp/kilo.txt)" != "$KILO" ]; then
		# Which peers have no live connection, and host 0's counters.
		cm_conns rxe0 | awk '{ print $4 }' | sort | uniq -c
		cm_stat_all rxe0
	fi
	read -r slab1 used1 _ _ _ <<< "$(mem_snap)"
	# Receive buffers of host 0's opened ends and of the peers' accepted
	# ends, idle now (the probe's datagrams are long delivered).
	rec kilo "$tag" rx_buf_opened "$(cm_conns rxe0 | awk '{ for (i = 1; i < NF; i++) if ($i == "rx_buf_bytes") s += $(i + 1) } END { print s + 0 }')" B
	rec kilo "$tag" rx_buf_accepted "$(cat /sys/kernel/debug/ipoib_cm/*/connections | awk '/^#/ { next } $3 == "passive" { for (i = 1; i < NF; i++) if ($i == "rx_buf_bytes") s += $(i + 1) } END { print s + 0 }')" B
	while read -r k v; do
		rec kilo "$tag" "$k" "$v" "$([ "$k" = live_ms ] && echo ms || echo n)"
	done < /tmp/kilo.txt
	rec kilo "$tag" conns_per_s "$(awk '$1 == "live" { n = $2 }
		$1 == "live_ms" { printf "%.1f", n * 1000 / $2 }' /tmp/kilo.txt)" conn/s
	rec kilo "$tag" used_per_conn $(((used1 - used0) / KILO)) kB
	rec kilo "$tag" slab_per_conn $(((slab1 - slab0) / KILO)) kB

	# Teardown: host 0 leaves connected mode with every connection open.
	# The write returns once its ends are closed; the peers close theirs
	# on its DREQs.  Then host 0 comes back and opens them all again:
	# the paths are known by now, so this is the setup rate itself.
	t0=$EPOCHREALTIME
	set_mode ns0 "$IB0" datagram
	rec kilo "$tag" modeswitch_ms "$(ms_since "$t0")" ms
	rec kilo "$tag" modeswitch_close_ms "$(close_ms_of "$IB0")" ms
	wait_for 300 "the peers' ends closed" sh -c \
		"! cat /sys/kernel/debug/ipoib_cm/*/connections | grep -qv '^#'"
	rec kilo "$tag" all_closed_ms "$(ms_since "$t0")" ms
	set_mode ns0 "$IB0" connected
	# The link address changed twice (its RC flag): the kernel flushed
	# the neighbours, static ones too.
	ip -n ns0 -batch /tmp/kilo-neigh || fail "host 0's neighbours, again"
	KILO_PACE_MS=$pace python3 "$HERE/kiloprobe.py" ns0 rxe0-1 /tmp/kilo-dests > /tmp/kilo2.txt ||
		{ cat /tmp/kilo2.txt; fail "kiloprobe.py, second time"; }
	cat /tmp/kilo2.txt
	while read -r k v; do
		rec kilo "$tag-again" "$k" "$v" "$([ "$k" = live_ms ] && echo ms || echo n)"
	done < /tmp/kilo2.txt
	rec kilo "$tag-again" conns_per_s "$(awk '$1 == "live" { n = $2 }
		$1 == "live_ms" { printf "%.1f", n * 1000 / $2 }' /tmp/kilo2.txt)" conn/s

	# rmmod with every connection open; the kernel log marks its start
	# and end, so that its phases can be read against the messages.
	echo "bench: rmmod begins" > /dev/kmsg
	t0=$SECONDS
	# Where rmmod's CPU time goes (it runs, it does not wait): a profile
	# of the whole guest while it runs, if perf works here.
	ppid=
	if perf record -o /tmp/perf.data -e cpu-clock -a -- true > /dev/null 2>&1; then
		perf record -o /tmp/perf-rmmod.data -e cpu-clock -F 99 -a -g -- \
			sleep 3600 > /dev/null 2>&1 &
		ppid=$!
	fi
	unload_module
	echo "bench: rmmod ended" > /dev/kmsg
	if [ -n "$ppid" ]; then
		kill -INT "$ppid" 2> /dev/null || true
		wait "$ppid" || true
		{
			echo "# self"
			perf report -i /tmp/perf-rmmod.data --stdio --no-children \
				--sort sym --percent-limit 1 -g none 2> /dev/null
			echo "# with callees"
			perf report -i /tmp/perf-rmmod.data --stdio --children \
				--sort sym --percent-limit 5 -g none 2> /dev/null
		} | grep -v '^$' > "$VMOUT/profile-rmmod-$tag.txt" || true
	fi
	rec kilo "$tag" unload_s $((SECONDS - t0)) s
	# Of that, host 0 closing its connections, as the module reports it
	# (the peers' ends close on its DREQs meanwhile), and the module's
	# devices removed, from the first to the last: this rmmod's only.
	rec kilo "$tag" close_ms "$(close_ms_of "$IB0")" ms
	dmesg | awk -F'[][]' '
		/bench: rmmod begins/ { b = $2 + 0; f = 0; t = 0 }
		/ipoib_cm: device removed/ { t = $2 + 0; if (!f) f = t }
		/bench: rmmod ended/ { e = $2 + 0 }
		END { printf "to_first_removal_s %.1f\ndevices_gone_s %.1f\nafter_last_removal_s %.1f\n",
			     f - b, t - f, e - t }' |
		while read -r k v; do rec kilo "$tag" "$k" "$v" s; done
	hosts_down
	fabric_bridge_del
}

# Milliseconds since an $EPOCHREALTIME value.
ms_since() {
	local now=$EPOCHREALTIME

	echo $(((${now/./} - ${1/./}) / 1000))
}

# The last time interface IFACE took to close all KILO connections, as
# the module reports it.
close_ms_of() {
	dmesg | sed -n "s/.* $1: connected mode stopped: $KILO connections closed in \([0-9]*\) ms/\1/p" |
		tail -n 1
}

# Every non-zero counter of an RDMA device's interface.
cm_stat_all() {
	grep -v ' 0$' "$(cm_debugfs "$1")/stats"
}

# Undo fabric_bridge (after the module is gone).
fabric_bridge_del() {
	local d

	for d in $(rdma link show | sed -n 's/^link \(rxe[0-9]*\)\/.*/\1/p'); do
		rdma link del "$d"
	done
	for d in $(ip -o link show type veth | sed -n 's/^[0-9]*: \(rv[0-9]*\)@.*/\1/p'); do
		ip link del "$d"
	done
	ip link del br0
}

fabric_single
! part a || bench_rc
! part c || bench_veth
! part b || bench_ipoib
! part l || bench_latency
rdma link del rxe0
rdma link del rxe1
ip link del veth0
! part d || bench_peers
! part m || bench_scale
! part k || bench_kilo "$KILO" srq
# Unpaced, part n's 128 first datagrams left every REQ in req-sent for
# 600 s (drop_tx_error 12): paced 20 ms apart.
! part n || bench_kilo 128 nosrq 20
say "bench: done"
