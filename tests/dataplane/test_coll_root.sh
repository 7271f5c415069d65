#!/usr/bin/env bash
# Broadcast and Reduce through rocelab-dp (issue 40; virtual clock, data=on):
#   - on 2 and 4 servers of 4 GPUs (rocelab-topo --generate, meta layout) and
#     on plain hosts (data/coll-no-servers.yaml), both models: exit 0, the
#     result line names the op's redop (none / sum) and the root, no wrong
#     element, busbw equal to algbw (nccl-tests' factor 1);
#   - on 2 servers, Broadcast from rank 3 (s0-g3): the chain 3 -> 4 -> ... -> 2
#     crosses servers at 3 -> 4 and 7 -> 0, so 5 of its 7 hops are NVLink
#     ones: "# nvlink: transfers 10" for 2 chunks of 512 KiB;
#   - root=8 of 8 ranks: exit 2, the pair named.
# usage: test_coll_root.sh ROCELAB_DP ROCELAB_TOPO DATA_DIR
set -u
DP=$1 TOPO_TOOL=$2 DATA=$3
RUN_PREFIX=rl-root
# shellcheck source=coll_run.sh
. "$(dirname "$0")/coll_run.sh"   # tap.sh, dp(), $tmp/s2.yaml s4.yaml hosts.yaml
for topo in s2 s4 hosts; do
  for op in broadcast reduce; do
    for model in rocelab nccl; do
      redop=none; [ $op = reduce ] && redop=sum
      out=$tmp/$topo-$op-$model.txt
      dp "$topo-$op-$model" --topology "$tmp/$topo.yaml" \
        --coll "model=$model,op=$op,sizes=1M,root=3,data=on" > "$out" 2> "$out.err"; rc=$?
      # size count type redop root time algbw busbw #wrong
      line=$(grep -E '^ +1048576 ' "$out")
      check "$topo $op model=$model: exit 0 ($rc), $redop, root 3, no wrong element, busbw = algbw" \
        "[ $rc -eq 0 ] && awk -v r=$redop '{ exit !(\$4 == r && \$5 == 3 && \$7 == \$8 && \$9 == 0) }' <<< '$line'"
    done
  done
done
check "2 servers, Broadcast from 3: 10 NVLink transfers (5 hops x 2 chunks)" \
  "grep -q '^# nvlink: transfers 10, bytes 5242880,' $tmp/s2-broadcast-rocelab.txt"

dp bad --topology "$tmp/s2.yaml" --coll "op=reduce,root=8" > /dev/null 2> "$tmp/bad.err"; rc=$?
check "root=8 of 8 ranks: exit 2 ($rc), the pair named" \
  "[ $rc -eq 2 ] && grep -q 'root=8: outside the 8 ranks' $tmp/bad.err"
tap_done
