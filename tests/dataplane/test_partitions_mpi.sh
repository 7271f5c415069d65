#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rocelab-dp under mpirun (issue 14 item 4): the partitions as MPI ranks give
# the same output as one process, byte for byte (rank 0 prints it):
# generators on the default topology (tables, flow paths), a link between
# ranks that goes down, PFC between ranks (a lossless 2:1 incast), 64
# emulated NICs running an AllReduce and an AllToAll (each rank runs its
# leaves' NICs, the collective in lanes; also one that fails), the E1
# experiment; with 2 ranks and 3 (oversubscribed on 2 cores). Frames do cross
# between ranks.
# Each rank holds its share of the packet pool and rank 0 prints every rank's peak memory.
# Telemetry answers from rank 0 with every rank's counters.
# The CSV and pcaps too, and a pcapng of three links. Bad input gives exit 2 with one message. Runs in a network namespace of its
# own (mpirun's launcher talks over its loopback). No runtime directory stays.
#
# usage: test_partitions_mpi.sh ROCELAB_DP ROCELAB_TOPO DATA_DIR TOPOLOGIES_DIR EXPERIMENTS_DIR MPIRUN  (root)
set -u
if [ "${ROCELAB_IN_NETNS:-}" != 1 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "test_partitions_mpi.sh: needs root"; echo "0 passed, 1 failed"; exit 1; }
  ROCELAB_IN_NETNS=1 exec timeout 1500 unshare --net -- bash "$0" "$@"
fi
ip link set lo up
DP=$(realpath "$1") TOPO=$2 DATA=$3 TOPOS=$4 EXPS=$5 MPIRUN=$6
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done
. "$(dirname "$0")/part_cases.sh"      # the cases (gens, fo, inc, nics64) and what reads the output

n=0
name() { n=$((n + 1)); echo "rl-pm$$-$n"; }
# mpirun NP ARGS...: rocelab-dp as NP ranks (shared memory between them; as root here).
# Under AddressSanitizer, leak checks stay on for the single-process runs but not
# under mpirun: Open MPI's components are unloaded at MPI_Finalize with their
# allocations (kilobytes, in modules LeakSanitizer can no longer name).
mpi() {
  local np=$1; shift
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 600 "$MPIRUN" --oversubscribe --allow-run-as-root --mca btl self,vader -np "$np" \
    "$DP" --clock virtual --name "$(name)" "$@"
}
one() { timeout 600 "$DP" --clock virtual --name "$(name)" "$@"; }
# A run as one process (TAG 1) or as N ranks (TAG mN), or what TAG names (`by_ranks label TAG`).
by_ranks() {
  if [ "$1" = label ]; then [ "$2" = 1 ] && echo "one process" || echo "mpirun -np ${2#m}"; return; fi
  local t=$1; shift
  if [ "$t" = 1 ]; then one "$@"; else mpi "${t#m}" "$@"; fi
}
# same_as_one NAME ARGS...: mpirun -np 2 (or each of ${NPS}) against one process;
# @T@ in an argument becomes 1, or mN for N ranks.
same_as_one() {
  local name=$1 np tags=""; shift
  for np in ${NPS:-2}; do tags+=" m$np"; done
  same_as_ref "$name" by_ranks 1 "$tags" "$@"
}

# 1. Generators on the default topology: link, switch, host and flow tables, the
#    link time series, a pcap of a link between ranks and one of a host link.
same_as_one default --topology "$TOPOS/default.yaml" "${gens[@]}" --csv "$tmp/default.@T@.csv" --csv-interval 20us \
  --capture "leaf0-spine1=$tmp/default.@T@.pcap" --capture "h2-leaf0=$tmp/default-h2.@T@.pcap"
check "default: the CSV time series and both pcaps are identical for one process and 2 ranks" \
  "cmp -s $tmp/default.1.csv $tmp/default.m2.csv && [ \$(wc -l < $tmp/default.1.csv) -gt 20 ] && cmp -s $tmp/default.1.pcap $tmp/default.m2.pcap && cmp -s $tmp/default-h2.1.pcap $tmp/default-h2.m2.pcap && [ \$(stat -c %s $tmp/default.1.pcap) -gt 100000 ]"
# 1b. One pcapng of three links (between ranks, a host's, inside a rank): records of
#     several links gathered from the ranks and merged, the file one process writes.
same_as_one ng --topology "$TOPOS/default.yaml" "${gens[@]}" --capture "leaf0-spine1=$tmp/ng.@T@.pcapng" \
  --capture "h2-leaf0=$tmp/ng.@T@.pcapng" --capture "leaf0-spine0=$tmp/ng.@T@.pcapng"
check "pcapng of three links: identical for one process and 2 ranks" \
  "cmp -s $tmp/ng.1.pcapng $tmp/ng.m2.pcapng && [ \$(stat -c %s $tmp/ng.1.pcapng) -gt 100000 ]"
c=$(crossed "$tmp/default.m2.err")
check "default: frames crossed between the ranks ($c); the flow table shows paths over both ranks' switches" \
  "[ \"${c:-0}\" -gt 1000 ] && grep -Eq 'leaf0:p[0-9]+ > spine1:p[0-9]+ > leaf1:p[0-9]+' $tmp/default.m2.txt"
check "default: stderr says 2 partitions, and each rank's events (both nonzero)" \
  "grep -q 'rocelab-dp: 2 partitions' $tmp/default.m2.err && grep -Eq 'partition 1: [1-9][0-9]* events' $tmp/default.m2.err"

# 2. A link between ranks goes down at 1 ms and comes back at 2 ms (topology events on every rank).
same_as_one failover "${fo[@]}"
same_as_one failover_bounded "${fo[@]}" --duration 1900us
check_failover_moved "$tmp/failover_bounded.m2.txt" "2 ranks"

# 3. PFC between ranks: senders in one rank, the bottleneck in another; 2 and 3 ranks.
NPS="2 3" same_as_one incast "${inc[@]}" --capture "leaf1-spine0=$tmp/incast.@T@.pcap"
check "incast: the pcap of the link between ranks (data one way, PFC the other) is identical for 1, 2 and 3 ranks" \
  "cmp -s $tmp/incast.1.pcap $tmp/incast.m2.pcap && cmp -s $tmp/incast.1.pcap $tmp/incast.m3.pcap"
rx=$(awk '$1 == "h2" && NF == 5 { print $4; exit }' "$tmp/incast.m2.txt")
check "incast: h2 received all 40000 packets with 2 ranks, and leaf1 sent PFC to spine0 (another rank)" \
  "[ \"$rx\" = 40000 ] && [ \"\$(lk $tmp/incast.m2.txt 'leaf1>spine0' 6)\" -gt 0 ]"

# 4. 64 emulated NICs on a generated 2-tier Clos: an AllReduce and an AllToAll, data checked.
nics64 m2

# 4a. Partial state (issue 42 item 4): each rank's packet pool is its partition's
#     share of --mbufs (the shares add up to at least the whole, each below it), rank 0
#     prints every rank's peak memory on stderr, and the output stays one process's.
#     With a pool of 131,071 frames of 4 KiB (some 600 MB, the most of a run's memory,
#     so that what both runs hold besides, AddressSanitizer's in its CI run, weighs
#     less), each rank's peak is below 3/4 of one process's (getrusage of the child).
pool_lines() { # ERR NP: "rank K: peak memory" lines of ranks 0..NP-1, pools that cover the whole
  awk -v np="$2" -v whole="$3" '/^rocelab-dp: rank [0-9]+: peak memory [0-9.]+ MiB/ {
      if ($6 > 0 && $13 < whole) { n++; sum += $13 } } END { exit !(n == np && sum >= whole) }' "$1"
}
check "partial state: both ranks print their peak memory, pools of less than 16,383 frames adding up to it (allreduce64)" \
  "pool_lines $tmp/allreduce64.m2.err 2 16383 && ! grep -q 'peak memory' $tmp/allreduce64.1.err"
check "partial state: 3 ranks print their peak memory, pools adding up to the default 65,535 (incast)" \
  "pool_lines $tmp/incast.m3.err 3 65535"
peak_one() { # OUT ARGS...: run ARGS as one process, stdout to OUT; print its peak resident memory in KiB
  /usr/bin/python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"), stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
big=(--topology "$tmp/clos64.yaml" --mbufs 131071 --coll 'op=allreduce,sizes=1M,data=off,qps=4,mode=split')
kib=$(peak_one "$tmp/big.1.txt" timeout 600 "$DP" --clock virtual --name "$(name)" "${big[@]}")
mpi 2 "${big[@]}" > "$tmp/big.m2.txt" 2> "$tmp/big.m2.err"; rc=$?
mib=$(awk '/^rocelab-dp: rank [0-9]+: peak memory/ { if ($6 > m) m = $6 } END { print m + 0 }' "$tmp/big.m2.err")
check "partial state: a pool of 131,071 frames, mpirun -np 2: each rank's peak (at most $mib MiB) below 3/4 of one process's (${kib:-?} KiB), the same output, exit $rc" \
  "[ $rc = 0 ] && [ \"\${kib:-0}\" -gt 0 ] && awk -v m=$mib -v k=\${kib:-0} 'BEGIN { exit !(m > 0 && m * 1024 < 0.75 * k) }' && cmp -s <(strip_wall $tmp/big.1.txt) <(strip_wall $tmp/big.m2.txt) && pool_lines $tmp/big.m2.err 2 131071"

# 4b. A collective in lanes that fails (a host link goes down for good, on
#     either rank's side): the ranks' lanes end as the threads' do (a lane
#     frozen when it failed; the others stop waiting a window later), with the
#     same failure line and totals, and exit 1.
fail_case() { # NAME HOST-LINK AT COLL
  cp "$tmp/clos64.yaml" "$tmp/$1.yaml"
  printf 'events:\n  - {at: %s, link: %s, action: down}\n' "$3" "$2" >> "$tmp/$1.yaml"
  one --workers 2 --topology "$tmp/$1.yaml" --coll "$4" > "$tmp/$1.w2.txt" 2> "$tmp/$1.w2.err"; local frc=$?
  mpi 2 --topology "$tmp/$1.yaml" --coll "$4" > "$tmp/$1.m2.txt" 2> "$tmp/$1.m2.err"; local mrc=$?
  check "$1: a collective in lanes that fails: mpirun -np 2 prints what --workers 2 prints (the failure line, the totals), both exit 1 ($frc, $mrc)" \
    "[ $frc = 1 ] && [ $mrc = 1 ] && grep -q 'a work completion failed (transport retry counter exceeded)' $tmp/$1.m2.txt && grep -q 'the collective in 2 lanes' $tmp/$1.m2.err && cmp -s <(strip_wall $tmp/$1.w2.txt) <(strip_wall $tmp/$1.m2.txt)"
}
fail_case fail-allreduce h40-leaf5 100us 'op=allreduce,sizes=1M,data=off,qps=1'
fail_case fail-alltoall h0-leaf0 20us 'op=alltoall,sizes=1M,data=off,qps=2'

# 5. E1 (smoke: first seed, two sizes) as 2 ranks: the same result tables.
PATH=$(dirname "$MPIRUN"):$PATH ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" e1_same --mpi m "mpirun -np 2"

# 6. Telemetry under mpirun: rank 0 answers (its socket is --name's) with every
#    rank's counters (leaf0 runs on rank 0, leaf1 and spine1 on rank 1), and a
#    link_set reaches every rank: the link rank 1 sends on stops carrying
#    frames, the other uplink takes them. /rocelab/flows is refused.
. "$(dirname "$0")/../common/tel.sh"   # tel QUERY, cell QUERY ROW COLUMN
tname=$(name)
TEL_NAME=$tname TEL_WAIT=10   # (rank 0's socket; a query waits for a poll point)
# (2 s of virtual time: some 7 s of wall time here, so the run is still going after
# the queries and the half second between the last two; 300 ms ended first at times)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 600 "$MPIRUN" --oversubscribe --allow-run-as-root --mca btl self,vader -np 2 \
  "$DP" --clock virtual --name "$tname" --topology "$TOPOS/default.yaml" --duration 2s \
  --gen 'h1>h3:flows=16,rate=40G,count=100000000' --gen 'h4>h2:rate=40G,count=100000000' > "$tmp/tel.out" 2> "$tmp/tel.err" & tpid=$!
for _ in $(seq 300); do [ -S "/var/run/dpdk/$tname/dpdk_telemetry.v2" ] && break; sleep 0.1; done
ev=0; for _ in $(seq 50); do ev=$(tel /rocelab/info | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['/rocelab/info']['events'])" 2>/dev/null); [ "${ev:-0}" -gt 0 ] && break; sleep 0.1; done
l0=$(cell /rocelab/switches leaf0 rx_pkts) l1=$(cell /rocelab/switches leaf1 rx_pkts) s1=$(cell /rocelab/switches spine1 fwd_pkts)
check "telemetry under mpirun: rank 0 answers with both ranks' switches (events ${ev:-?}, leaf0 ${l0:-?}, leaf1 ${l1:-?}, spine1 ${s1:-?})" \
  "[ \"\${ev:-0}\" -gt 0 ] && [ \"\${l0:-0}\" -gt 0 ] && [ \"\${l1:-0}\" -gt 0 ] && [ \"\${s1:-0}\" -gt 0 ]"
tel "/rocelab/link_set,leaf1-spine1,down" > "$tmp/tel.set"
up=1; for _ in $(seq 50); do up=$(cell "/rocelab/links,leaf1_to_spine1" leaf1_to_spine1 up); [ "$up" = 0 ] && break; sleep 0.1; done
a1=$(cell "/rocelab/links,leaf1_to_spine1" leaf1_to_spine1 tx_pkts) a0=$(cell "/rocelab/links,leaf1_to_spine0" leaf1_to_spine0 tx_pkts)
sleep 0.5
b1=$(cell "/rocelab/links,leaf1_to_spine1" leaf1_to_spine1 tx_pkts) b0=$(cell "/rocelab/links,leaf1_to_spine0" leaf1_to_spine0 tx_pkts)
check "telemetry under mpirun: link_set down applied on rank 1 too (up $up; leaf1>spine1 $a1 -> $b1, leaf1>spine0 $a0 -> $b0)" \
  "grep -q queued $tmp/tel.set && [ \"$up\" = 0 ] && [ -n \"$a1\" ] && [ \"$a1\" = \"$b1\" ] && [ \"\${b0:-0}\" -gt \"\${a0:-0}\" ]"
check "telemetry under mpirun: /rocelab/flows is refused (merged at the end)" "tel /rocelab/flows | grep -q '\"/rocelab/flows\":null'"
wait $tpid; rc=$?
check "telemetry under mpirun: the run ends by itself, exit 0, one rank's tables" \
  "[ $rc = 0 ] && [ \$(grep -c '^leaf0' $tmp/tel.out) -ge 1 ] && ! grep -q 'exchange between ranks failed' $tmp/tel.err"

# 6b. Telemetry with the NICs in lanes: while the run goes, /rocelab/nics sums
#     every rank's NICs (h63 runs on rank 1): a count between 0 and the final one
#     (the final table's) was read mid-run, and includes rank 1's frames.
tname=$(name)
TEL_NAME=$tname
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 600 "$MPIRUN" --oversubscribe --allow-run-as-root --mca btl self,vader -np 2 \
  "$DP" --clock virtual --name "$tname" --topology "$tmp/clos64.yaml" \
  --coll 'op=allreduce,sizes=256M,data=off,qps=1' > "$tmp/teln.out" 2> "$tmp/teln.err" & tpid=$!
for _ in $(seq 300); do [ -S "/var/run/dpdk/$tname/dpdk_telemetry.v2" ] && break; sleep 0.1; done
mid=0; for _ in $(seq 100); do mid=$(cell /rocelab/nics h63 sent_pkts); [ "${mid:-0}" -gt 0 ] && break; sleep 0.1; done
wait $tpid; rc=$?
fin=$(awk '$1 == "nic" { t = 1; next } t && $1 == "h63" { print $2; exit }' "$tmp/teln.out")
check "telemetry under mpirun, NICs in lanes: /rocelab/nics mid-run counts rank 1's h63 (${mid:-?} of ${fin:-?} frames), exit $rc" \
  "[ $rc = 0 ] && grep -q 'the collective in 2 lanes' $tmp/teln.err && [ \"\${mid:-0}\" -gt 0 ] && [ \"\${fin:-0}\" -gt \"\${mid:-0}\" ]"

# 7. Bad input: exit 2, one message (rank 0's), not one per rank.
bad() { # NAME EXPECTED-TEXT ARGS...
  local name=$1 want=$2; shift 2
  mpi 2 "$@" > "$tmp/bad.out" 2> "$tmp/bad.err"; local rc=$?
  check "bad input under mpirun: $name: exit 2 and '$want', said once" \
    "[ $rc = 2 ] && [ \$(grep -c -- \"$want\" $tmp/bad.err) = 1 ]"
}
bad "--workers 3 on 2 ranks" "the partitions are the ranks" --topology "$TOPOS/default.yaml" --workers 3
bad "a cut link with no delay" "link 'leaf0-spine1' (line [0-9]*) joins partitions" \
  --topology "$DATA/part-nodelay.yaml" --gen 'h0>h2:count=10'
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$MPIRUN" --oversubscribe --allow-run-as-root -np 2 "$DP" --clock live --topology "$TOPOS/default.yaml" \
  --name "$(name)" > "$tmp/bad.out" 2> "$tmp/bad.err"; rc=$?
check "bad input under mpirun: the live clock: exit 2, says the virtual clock only" \
  "[ $rc = 2 ] && grep -q 'virtual clock only' $tmp/bad.err"

# 8. Frames of a collective with data=off cross between ranks as their headers and
#    ICRC (the payload stands for zeros): captured on the switches' rank after the
#    crossing, they are the bytes one process captures (zeros, ICRCs intact).
"$TOPO" --generate spines=4,leaves=8,hosts=8,attach=emulated -o "$tmp/c64off.yaml" > /dev/null
for t in 1 m2; do
  by_ranks "$t" --topology "$tmp/c64off.yaml" --coll 'op=allreduce,sizes=1M,data=off,qps=4,mode=split' \
    --capture "leaf7-spine0=$tmp/off-$t.pcap" > "$tmp/off-$t.txt" 2>&1; echo $? > "$tmp/off-$t.rc"
done
check "data=off across ranks: leaf7>spine0's capture is one process's, byte for byte" \
  "[ \$(cat $tmp/off-1.rc) = 0 ] && [ \$(cat $tmp/off-m2.rc) = 0 ] && [ \$(stat -c %s $tmp/off-1.pcap) -gt 100000 ] && cmp -s $tmp/off-1.pcap $tmp/off-m2.pcap"

# 8b. A rank that cannot set up (a packet pool larger than each rank's share of the
#    memory: 16,777,215 frames of 9 KiB, 155 GiB) stops with every other rank, each
#    taking down what it set up (no MPI_Abort: the leftover check below counts these
#    runtime directories too).
if [ "$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)" -lt 300000 ]; then
  mpi 2 --topology "$DATA/emulated.yaml" --mbufs 16777215 > "$tmp/pool.out" 2> "$tmp/pool.err"; rc=$?
  check "a pool too large for each rank: exit 1, says what each rank has, no abort (exit $rc)" \
    "[ $rc = 1 ] && grep -q 'MiB are available to each rank on this machine' $tmp/pool.err && ! grep -q MPI_ABORT $tmp/pool.err"
fi

check "no DPDK runtime directory of this test is left" "! ls -d /var/run/dpdk/rl-pm$$-* 2>/dev/null | grep -q ."
tap_done
