#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Partitions on threads under ThreadSanitizer (a build with
# -Db_sanitize=thread, scripts/test.sh's build-tsan): the virtual clock's
# partitions share only what they synchronise, and a collective split into
# lanes (each emulated NIC in its leaf's partition, dataplane/hosts/dp_coll.h)
# shares nothing between its lanes but through the barrier and the last
# lane's count (a sweep's next size: scheduled with every partition stopped); a lane that failed is frozen when it fails (its thread may
# poll it again while another thread ends the collective). Each run must
# exit 0 (1 for the failing collective) with no ThreadSanitizer report.
# (The live clock hands mbufs over DPDK rings, which are not instrumented:
# not run here.)
#
# usage: test_partitions_tsan.sh ROCELAB_DP ROCELAB_TOPO TOPOLOGIES_DIR
DP=$1 TOPO=$2 TOPOS=$3
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done

export TSAN_OPTIONS="halt_on_error=0 history_size=4 exitcode=66"
n=0
# [RC=N] run NAME WORKERS ARGS...: exit N (0), no report, and (with a collective) the NICs in lanes
run() {
  local name=$1 w=$2 want=${RC:-0}; shift 2
  n=$((n + 1))
  timeout 900 "$DP" --clock virtual --name "rl-pts$$-$n" --workers "$w" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
  local rc=$? races
  races=$(grep -c 'WARNING: ThreadSanitizer' "$tmp/$name.err")
  check "$name (--workers $w): exit $want ($rc), no ThreadSanitizer report ($races)" \
    "[ $rc = $want ] && [ $races = 0 ] && grep -q '^rocelab-dp: ran' $tmp/$name.out"
  [ "$races" = 0 ] || grep -A8 'WARNING: ThreadSanitizer' "$tmp/$name.err" | head -40
}

run gens 2 --topology "$TOPOS/default.yaml" --gen 'h1>h3:flows=16,rate=40G,count=3000' \
  --gen 'h2>h4:proto=roce,flows=8,rate=40G,count=3000' --gen 'h3>h1:size=200,rate=10G,count=3000'
"$TOPO" --generate spines=4,leaves=8,hosts=8,attach=emulated -o "$tmp/clos64.yaml" > /dev/null
run allreduce 2 --topology "$tmp/clos64.yaml" --flows 0 --coll 'op=allreduce,sizes=256K,data=on,qps=2'
run alltoall 4 --topology "$tmp/clos64.yaml" --flows 0 --coll 'op=alltoall,sizes=128K,data=on,qps=2'
run ctran 2 --topology "$tmp/clos64.yaml" --flows 0 --coll 'model=nccl,op=alltoall,sizes=256K,data=off,mode=ctran'
run proxy 2 --topology "$tmp/clos64.yaml" --flows 0 --coll 'model=nccl,op=allreduce,sizes=256K,data=on,proxy_post_wqe=200ns,proxy_poll_cqe=100ns'
# the same as a sweep with a series: each lane keeps its rows, the last lane's thread merges them
run series 2 --topology "$tmp/clos64.yaml" --flows 0 --coll-series "$tmp/series.csv" \
  --coll 'model=nccl,op=allreduce,sizes=128K:256K,data=off,proxy_post_wqe=200ns,proxy_poll_cqe=100ns'
run incast 4 --topology "$tmp/clos64.yaml" --flows 0 --coll 'op=incast,sizes=64K,data=on,hosts=h0+h9+h17+h33+h50'
# a sweep: once every lane ended a size, thread 0 puts the next one's start on the global engine
run sweep 2 --topology "$tmp/clos64.yaml" --flows 0 --coll 'op=allreduce,sizes=64K:256K,data=on,qps=2'
# a host link down for good: h0's lane fails, the other stops waiting for it
cp "$tmp/clos64.yaml" "$tmp/fail64.yaml"
printf 'events:\n  - {at: 20us, link: h0-leaf0, action: down}\n' >> "$tmp/fail64.yaml"
RC=1 run fail 2 --topology "$tmp/fail64.yaml" --flows 0 --coll 'op=alltoall,sizes=1M,data=off,qps=2'
check "the failing collective ran in lanes and said why" \
  "grep -q 'the collective in 2 lanes' $tmp/fail.err && grep -q 'a work completion failed' $tmp/fail.out"
check "the collectives ran in lanes (each NIC with its leaf)" \
  "[ \$(grep -l 'emulated NICs run with their leaves' $tmp/allreduce.err $tmp/alltoall.err $tmp/ctran.err $tmp/incast.err $tmp/sweep.err $tmp/proxy.err $tmp/series.err | wc -l) = 7 ] && [ \$(grep -c '^131072,' $tmp/series.csv) -gt 3 ]"
check "the AllReduce's, AllToAll's and sweep's data are right" \
  "grep -Eq '^ +262144 .* 0( +N/A){4}\$' $tmp/allreduce.out && grep -Eq '^ +131072 .* 0( +N/A){4}\$' $tmp/alltoall.out && [ \$(grep -Ec '^ +(65536|131072|262144) .* 0( +N/A){4}\$' $tmp/sweep.out) = 3 ]"

tap_done
