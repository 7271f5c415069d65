# SPDX-License-Identifier: BSD-3-Clause
# The cases both partition tests run (test_partitions.sh on threads,
# test_partitions_mpi.sh on MPI ranks), and what they read from the output.
# Source it after tests/common/tap.sh; it needs $TOPOS, $DATA, $TOPO, $tmp.

# Wall time differs between runs; everything else must not.
strip_wall() { sed 's/ in [0-9.]* s of wall time//; s/ ([0-9.]* M per wall second)//' "$1"; }
# frames that crossed partitions, and how many of them at a window's end (from stderr)
crossed() { sed -n 's/.* \([0-9]*\) frames crossed partitions.*/\1/p' "$1" | tail -1; }
at_end() { sed -n 's/.*(\([0-9]*\) at a window.s end).*/\1/p' "$1" | tail -1; }
lk() { awk -v l="$2" -v c="$3" '$1 == l { print $c; exit }' "$1"; } # FILE FROM>TO COLUMN

# same_as_ref NAME RUN REF "TAGS" ARGS...: `RUN TAG ARGS` for the reference tag
# REF and for each of TAGS (@T@ in an argument becomes the tag: file names);
# each of TAGS must exit 0 and print what REF prints, wall times aside. RUN is
# the caller's runner (threads, MPI ranks); `RUN label TAG` says what TAG is.
# Output: $tmp/NAME.TAG.{txt,err,rc,cmp}.
same_as_ref() {
  local name=$1 run=$2 ref=$3 tags=$4 t a args; shift 4
  for t in $ref $tags; do
    args=(); for a in "$@"; do args+=("${a//@T@/$t}"); done
    "$run" "$t" "${args[@]}" > "$tmp/$name.$t.txt" 2> "$tmp/$name.$t.err"; echo $? > "$tmp/$name.$t.rc"
    strip_wall "$tmp/$name.$t.txt" > "$tmp/$name.$t.cmp"
  done
  for t in $tags; do
    check "$name: $("$run" label "$t") exits 0 and prints what $("$run" label "$ref") prints" \
      "[ \$(cat $tmp/$name.$ref.rc) = 0 ] && [ \$(cat $tmp/$name.$t.rc) = 0 ] && grep -q '^rocelab-dp: ran' $tmp/$name.$ref.cmp && cmp -s $tmp/$name.$ref.cmp $tmp/$name.$t.cmp"
  done
}

# Generators on the default topology.
gens=(--gen 'h1>h3:flows=16,rate=40G,count=3000' --gen 'h2>h4:proto=roce,flows=8,rate=40G,count=3000'
      --gen 'h3>h1:size=200,rate=10G,count=3000' --gen 'h4>h2:proto=roce,rate=20G,count=2000')
# A link between partitions goes down at 1 ms and comes back at 2 ms, with traffic on it.
fo=(--topology "$DATA/part-failover.yaml" --gen 'h0>h2:flows=16,rate=40G,count=15000'
    --gen 'h1>h3:proto=roce,flows=8,rate=40G,count=15000')
# A 2:1 incast whose senders (leaf0) and bottleneck (leaf1 -> h2) are in different partitions.
inc=(--topology "$DATA/part-incast.yaml" --gen 'h0>h2:dscp=26,rate=10G,count=20000'
     --gen 'h1>h2:dscp=26,rate=10G,count=20000')

# check_failover_moved TXT WHO: at 1.9 ms the cut link is down and traffic moved to spine0.
check_failover_moved() {
  check "failover (at 1.9 ms, $2): the cut link is down and traffic moved to spine0" \
    "[ \"\$(lk $1 'leaf0>spine1' 2)\" = DOWN ] && [ \"\$(lk $1 'leaf0>spine0' 3)\" -gt \$((\$(lk $1 'leaf0>spine1' 3) * 3 / 2)) ]"
}

# nics64 WHO: 64 emulated NICs on a generated 2-tier Clos, an AllReduce and an
# AllToAll through same_as_one (the caller's); the AllReduce's data is checked
# in the output of WHO (a suffix: w2, m2).
nics64() {
  "$TOPO" --generate spines=4,leaves=8,hosts=8,attach=emulated -o "$tmp/clos64.yaml" > /dev/null
  same_as_one allreduce64 --topology "$tmp/clos64.yaml" --coll 'op=allreduce,sizes=1M,data=on,qps=4,mode=split'
  same_as_one alltoall64 --topology "$tmp/clos64.yaml" --coll 'op=alltoall,sizes=256K,data=on,qps=2'
  check "allreduce64 ($1): the collective ran and its data is right" \
    "grep -Eq '^ +1048576 .* 0( +N/A){4}\$' $tmp/allreduce64.$1.txt"
  # a sweep of three sizes in lanes: each next size a global event 10 us
  # after the last ended, scheduled once every lane said it ended the size
  # (ranks: after getting each other's lane records)
  same_as_one sweeplanes64 --topology "$tmp/clos64.yaml" --coll 'op=allreduce,sizes=64K:256K,data=on,qps=2,mode=split'
  check "sweeplanes64 ($1): three sizes ran, each with its data right" \
    "[ \$(grep -Ec '^ +(65536|131072|262144) .* 0( +N/A){4}\$' $tmp/sweeplanes64.$1.txt) = 3 ]"
  # inplace=on in lanes: each size's in-place pass a run of its own, counted by
  # every lane; one line per size with both halves checked
  same_as_one inplace64 --topology "$tmp/clos64.yaml" --coll 'op=allreduce,sizes=64K:128K,data=on,qps=2,mode=split,inplace=on'
  check "inplace64 ($1): two sizes, both passes ran with their data right" \
    "[ \$(grep -Ec '^ +(65536|131072) .* 0 +[0-9.]+ +[0-9.]+ +[0-9.]+ +0\$' $tmp/inplace64.$1.txt) = 2 ]"
  # NCCL's model with the proxy threads' costs (every experiment's host costs):
  # each rank's thread runs in its lane, its wake-ups first at their instant on
  # any engine; the same lines, the busiest thread's time included
  same_as_one proxy64 --topology "$tmp/clos64.yaml" \
    --coll 'op=allreduce,sizes=512K,data=on,model=nccl,NCCL_IB_QPS_PER_CONNECTION=4,NCCL_IB_SPLIT_DATA_ON_QPS=1,NCCL_MIN_NCHANNELS=2,NCCL_MAX_NCHANNELS=2,proxy_post_wqe=200ns,proxy_poll_cqe=100ns'
  check "proxy64 ($1): proxy costs in 2 lanes, the data right, the busiest proxy thread's time counted" \
    "grep -q 'emulated NICs run with their leaves: the collective in 2 lanes' $tmp/proxy64.$1.err && grep -Eq '^ +524288 .* 0( +N/A){4}\$' $tmp/proxy64.$1.txt && grep -Eq 'proxy_busy_max_ns=[1-9][0-9]*' $tmp/proxy64.$1.txt"
  # the same as a sweep with an active-QP series file (what every experiment
  # writes): on threads each lane keeps its ranks' rows, merged at each size's
  # end; MPI ranks keep the NICs together for it (rows do not travel)
  local ref=w1; [ "$1" = m2 ] && ref=1
  same_as_one series64 --topology "$tmp/clos64.yaml" --coll-series "$tmp/series64.@T@.csv" \
    --coll 'op=allreduce,sizes=256K:512K,data=off,model=nccl,NCCL_IB_QPS_PER_CONNECTION=4,NCCL_IB_SPLIT_DATA_ON_QPS=1,proxy_post_wqe=200ns,proxy_poll_cqe=100ns'
  local why='emulated NICs run with their leaves: the collective in 2 lanes'
  [ "$1" = m2 ] && why='emulated NICs all in partition 0 (with their leaves they need one collective of one iteration, no --rdma, and under mpirun no --coll-series)'
  local t
  for t in $(ls "$tmp"/series64.*.csv | sed 's/.*series64\.\(.*\)\.csv/\1/'); do
    check "series64 ($t): a sweep's series rows are one partition's ($(wc -l < "$tmp/series64.$t.csv") lines), both sizes" \
      "cmp -s $tmp/series64.$ref.csv $tmp/series64.$t.csv && [ \$(grep -c '^262144,' $tmp/series64.$t.csv) -gt 5 ] && [ \$(grep -c '^524288,' $tmp/series64.$t.csv) -gt 5 ]"
  done
  check "series64 ($1): stderr says where the NICs ran" "grep -qF '$why' $tmp/series64.$1.err"

  # a sweep whose ranks are all on leaves 0-3: with 2 partitions lane 1 has no
  # rank (it ends each size as it starts), with 4 lanes 2 and 3
  same_as_one sweepempty64 --topology "$tmp/clos64.yaml" --coll 'op=allreduce,sizes=64K:128K,data=on,hosts=h0+h8+h16+h24'
  check "sweepempty64 ($1): a sweep with lanes without a rank: both sizes, data right" \
    "[ \$(grep -Ec '^ +(65536|131072) .* 0( +N/A){4}\$' $tmp/sweepempty64.$1.txt) = 2 ] && grep -q 'the collective in 2 lanes' $tmp/sweepempty64.$1.err"
  # stopped in the 10 us between the first size (312 us) and the second: the
  # second is unfinished, as with one partition (exit 1 for both), not failed
  local t run=by_workers one=w1
  [ "$1" = m2 ] && run=by_ranks one=1
  for t in $one $1; do
    "$run" "$t" --topology "$tmp/clos64.yaml" --duration 316us \
      --coll 'op=allreduce,sizes=64K:256K,data=on,qps=2,mode=split' > "$tmp/sweepstop.$t.txt" 2> "$tmp/sweepstop.$t.err"
    echo $? > "$tmp/sweepstop.$t.rc"
    strip_wall "$tmp/sweepstop.$t.txt" > "$tmp/sweepstop.$t.cmp"
  done
  check "sweepstop64 ($1): a run stopped between two sizes in lanes prints what $("$run" label "$one") prints (one size, no failure)" \
    "[ \$(cat $tmp/sweepstop.$one.rc) = 1 ] && [ \$(cat $tmp/sweepstop.$1.rc) = 1 ] && cmp -s $tmp/sweepstop.$one.cmp $tmp/sweepstop.$1.cmp && grep -Eq '^ +65536 .* 0( +N/A){4}\$' $tmp/sweepstop.$1.txt && ! grep -q 'failed' $tmp/sweepstop.$1.txt"
  # a sweep with a series file stopped in its second size: the rows one partition
  # wrote by then (each lane completes the rows that ended by the lanes' last change)
  for t in $one $1; do
    "$run" "$t" --topology "$tmp/clos64.yaml" --duration 700us --coll-series "$tmp/seriescut.$t.csv" \
      --coll 'op=allreduce,sizes=256K:512K,data=off,model=nccl,NCCL_IB_QPS_PER_CONNECTION=4,NCCL_IB_SPLIT_DATA_ON_QPS=1,proxy_post_wqe=200ns,proxy_poll_cqe=100ns' \
      > "$tmp/seriescut.$t.txt" 2> "$tmp/seriescut.$t.err"
    echo $? > "$tmp/seriescut.$t.rc"
    strip_wall "$tmp/seriescut.$t.txt" > "$tmp/seriescut.$t.cmp"
  done
  check "seriescut64 ($1): stopped in the second size, the same lines and series rows as $("$run" label "$one") ($(grep -c '^524288,' "$tmp/seriescut.$1.csv") rows of it)" \
    "[ \$(cat $tmp/seriescut.$one.rc) = 1 ] && [ \$(cat $tmp/seriescut.$1.rc) = 1 ] && cmp -s $tmp/seriescut.$one.cmp $tmp/seriescut.$1.cmp && cmp -s $tmp/seriescut.$one.csv $tmp/seriescut.$1.csv && [ \$(grep -c '^524288,' $tmp/seriescut.$1.csv) -gt 3 ]"
  if [ "$1" = m2 ]; then
    check "sweeplanes64 (m2): each rank ran its leaves' NICs, the sweep in 2 lanes" \
      "grep -q 'emulated NICs run with their leaves: the collective in 2 lanes' $tmp/sweeplanes64.m2.err"
    # ranks: each rank runs its leaves' NICs and its lane; rank 0 gathers the
    # other's lane (its end, statistics, data check) and NIC counters
    check "allreduce64 (m2): each rank ran its leaves' NICs, the collective in 2 lanes" \
      "grep -q 'emulated NICs run with their leaves: the collective in 2 lanes' $tmp/allreduce64.m2.err && grep -q 'the collective in 2 lanes' $tmp/alltoall64.m2.err"
    return 0
  fi
  [ "$1" = w2 ] || return 0
  # threads: each NIC runs in its leaf's partition, the collective split in lanes;
  # a sweep of sizes needs a moment global to every rank: the NICs stay together
  check "allreduce64 (w2): the NICs ran with their leaves, the collective in 2 lanes" \
    "grep -q 'emulated NICs run with their leaves: the collective in 2 lanes' $tmp/allreduce64.w2.err"
  check "rocelab-topo --partitions 2 --nics-with-leaves shows that cut (32 NICs a side), without it all in 0" \
    "\"$TOPO\" --partitions 2 $tmp/clos64.yaml --nics-with-leaves | grep -q '^partition 0: leaf0 leaf1 leaf2 leaf3 spine0 spine2; 32 hosts' && \"$TOPO\" --partitions 2 $tmp/clos64.yaml | grep -q '^partition 0:; 64 hosts'"
  WORKERS="1 2" same_as_one together64 --topology "$tmp/clos64.yaml" --nics-together \
    --coll 'op=allreduce,sizes=1M,data=on,qps=4,mode=split'
  check "together64 (w2): --nics-together keeps the NICs in partition 0; the same output as with lanes" \
    "grep -q 'emulated NICs all in partition 0 (--nics-together)' $tmp/together64.w2.err && cmp -s $tmp/together64.w2.cmp $tmp/allreduce64.w2.cmp"
  check "sweeplanes64 (w2): the NICs ran with their leaves, the sweep in 2 lanes" \
    "grep -q 'emulated NICs run with their leaves: the collective in 2 lanes' $tmp/sweeplanes64.w2.err"
  same_as_one sweep64 --topology "$tmp/clos64.yaml" --coll 'op=allreduce,sizes=64K:128K,data=on,iters=2'
  check "sweep64 (w2): iterations keep the NICs in partition 0, and it says why" \
    "grep -q 'emulated NICs all in partition 0 (with their leaves they need one collective of one iteration' $tmp/sweep64.w2.err && grep -Eq '^ +131072 .* 0( +N/A){4}\$' $tmp/sweep64.w2.txt"
  # links of 20 us between partitions: a window is longer than the gap between sizes
  sed 's/^defaults:$/defaults:\n  link: {delay: 20us}/' "$tmp/clos64.yaml" > "$tmp/clos64-slow.yaml"
  WORKERS="1 2" same_as_one sweepslow64 --topology "$tmp/clos64-slow.yaml" --coll 'op=allreduce,sizes=64K:128K,data=off'
  check "sweepslow64 (w2): with 20 us links a sweep keeps the NICs in partition 0, and it says why" \
    "grep -q 'a sweep of sizes needs the links between partitions shorter than 10000 ns (the gap between sizes), not 20000' $tmp/sweepslow64.w2.err"
}

# e1_same FLAG TAG WHAT: the E1 experiment (smoke: first seed, two sizes) with
# FLAG 1 and FLAG 2 (--workers, --mpi) gives the same results and totals.
e1_same() {
  local flag=$1 tag=$2 k
  for k in 1 2; do
    timeout 900 /usr/bin/python3 "$(dirname "$0")/../../scripts/experiment.py" "$EXPS/e1-eecmp-qp-scaling.yaml" \
      --smoke --no-pictures "$flag" $k --dp "$DP" --out "$tmp/e1-$tag$k" > "$tmp/e1-$tag$k.log" 2>&1
    echo $? > "$tmp/e1-$tag$k.rc"
  done
  check "E1 (smoke): $3 gives the same results and totals as one" \
    "[ \$(cat $tmp/e1-${tag}1.rc) = 0 ] && [ \$(cat $tmp/e1-${tag}2.rc) = 0 ] && cmp -s $tmp/e1-${tag}1/totals.csv $tmp/e1-${tag}2/totals.csv && cmp -s $tmp/e1-${tag}1/results.csv $tmp/e1-${tag}2/results.csv && [ \$(wc -l < $tmp/e1-${tag}1/results.csv) -gt 5 ]"
}
