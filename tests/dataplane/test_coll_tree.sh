#!/usr/bin/env bash
# Tree AllReduce and NCCL's pick through rocelab-dp (issue 40; virtual clock):
#   - algo=tree on 2 and 4 servers of 4 GPUs and on plain hosts, both models,
#     data=on: exit 0, no wrong element, a "# algo: tree (algo=tree)" line;
#   - algo=auto, model nccl, 64K:64M on 4 servers: a "# algo:" line per size
#     (11), the tree at 64 KiB and the ring at 64 MiB (NCCL 2.21.5's tuning on
#     its H100 graph; nccl/nc_tune), exit 0;
#   - the default (ring) prints no "# algo:" line;
#   - op=allgather with algo=tree, algo=tree on servers of 3 and 1 GPUs,
#     NCCL_ALGO=NVLS and NCCL_PROTO=LL256 (unknown): exit 2, the pair named.
# usage: test_coll_tree.sh ROCELAB_DP ROCELAB_TOPO DATA_DIR
set -u
DP=$1 TOPO_TOOL=$2 DATA=$3
RUN_PREFIX=rl-tree
# shellcheck source=coll_run.sh
. "$(dirname "$0")/coll_run.sh"   # tap.sh, dp(), $tmp/s2.yaml s4.yaml hosts.yaml
for topo in s2 s4 hosts; do
  for model in rocelab nccl; do
    out=$tmp/$topo-$model.txt
    dp "$topo-$model" --topology "$tmp/$topo.yaml" \
      --coll "model=$model,algo=tree,channels=2,sizes=1M,data=on" > "$out" 2> "$out.err"; rc=$?
    check "$topo algo=tree model=$model: exit 0 ($rc), no wrong element, the algo line" \
      "[ $rc -eq 0 ] && grep -Eq '^ +1048576 .* sum +-1 .* 0( +N/A){4}\$' $out && grep -qx '# algo: tree (algo=tree)' $out"
  done
done

dp auto --topology "$tmp/s4.yaml" --coll "model=nccl,algo=auto,sizes=64K:64M,data=off" \
  > "$tmp/auto.txt" 2> "$tmp/auto.err"; rc=$?
check "algo=auto: exit 0 ($rc), 11 '# algo:' lines" "[ $rc -eq 0 ] && [ \$(grep -c '^# algo: ' $tmp/auto.txt) -eq 11 ]"
check "algo=auto: tree at 64 KiB, ring at 64 MiB" \
  "grep -q '^# algo: tree (NCCL.s tuning picks Tree/[A-Za-z0-9]* for 65536 B' $tmp/auto.txt && grep -q '^# algo: ring (NCCL.s tuning picks Ring/[A-Za-z0-9]* for 67108864 B' $tmp/auto.txt"

dp ring --topology "$tmp/s2.yaml" --coll "sizes=1M" > "$tmp/ring.txt" 2>&1; rc=$?
check "the default ring: exit 0 ($rc), no '# algo:' line" "[ $rc -eq 0 ] && ! grep -q '^# algo' $tmp/ring.txt"

dp op --topology "$tmp/s2.yaml" --coll "op=allgather,algo=tree" > /dev/null 2> "$tmp/op.err"; rc=$?
check "op=allgather,algo=tree: exit 2 ($rc), AllReduce only" \
  "[ $rc -eq 2 ] && grep -q -- '--coll: algo=tree: the tree runs AllReduce only (op=allgather)' $tmp/op.err"
dp uneven --topology "$tmp/s2.yaml" --coll "algo=tree,hosts=s0-g0+s0-g1+s0-g2+s1-g0" > /dev/null 2> "$tmp/un.err"; rc=$?
check "algo=tree on servers of 3 and 1 GPUs: exit 2 ($rc), said" \
  "[ $rc -eq 2 ] && grep -q -- '--coll: algo=tree: the ranks. servers have different GPU counts' $tmp/un.err"
for bad in NCCL_ALGO=NVLS NCCL_PROTO=LL256; do
  dp bad --topology "$tmp/s2.yaml" --coll "model=nccl,$bad" > /dev/null 2> "$tmp/bad.err"; rc=$?
  check "$bad: exit 2 ($rc), the pair named" "[ $rc -eq 2 ] && grep -q -- '--coll: $bad: ' $tmp/bad.err"
done
tap_done
