#!/usr/bin/env bash
# Send/Recv through rocelab-dp (issue 40, item 3; virtual clock, data=on):
#   - on 2 servers of 4 GPUs (rocelab-topo --generate, meta layout) and on
#     plain hosts (data/coll-no-servers.yaml), both models: exit 0, the result
#     line says redop none and root -1, no wrong element, busbw equal to algbw
#     (nccl-tests' factor 1);
#   - on 2 servers, shift 1: 3 -> 4 and 7 -> 0 cross servers, the other 6
#     pairs are NVLink ones: 1 MiB in 2 chunks of 512 KiB each is
#     "# nvlink: transfers 12, bytes 6291456";
#   - pairs 0>4+1>2 on 2 servers: 1 NVLink pair (1 -> 2), 2 transfers;
#   - pairs=3>9 of 8 ranks, and shift=8: exit 2, the pair or the shift named.
# usage: test_coll_sendrecv.sh ROCELAB_DP ROCELAB_TOPO DATA_DIR
set -u
DP=$1 TOPO_TOOL=$2 DATA=$3
RUN_PREFIX=rl-sr
# shellcheck source=coll_run.sh
. "$(dirname "$0")/coll_run.sh"   # tap.sh, dp(), $tmp/s2.yaml s4.yaml hosts.yaml
for topo in s2 hosts; do
  for model in rocelab nccl; do
    out=$tmp/$topo-$model.txt
    dp "$topo-$model" --topology "$tmp/$topo.yaml" \
      --coll "model=$model,op=sendrecv,sizes=1M,data=on" > "$out" 2> "$out.err"; rc=$?
    # size count type redop root time algbw busbw #wrong
    line=$(grep -E '^ +1048576 ' "$out")
    check "$topo sendrecv model=$model: exit 0 ($rc), none, root -1, no wrong element, busbw = algbw" \
      "[ $rc -eq 0 ] && awk '{ exit !(\$4 == \"none\" && \$5 == -1 && \$7 == \$8 && \$9 == 0) }' <<< '$line'"
  done
done
check "2 servers, shift 1: 12 NVLink transfers (6 pairs x 2 chunks)" \
  "grep -q '^# nvlink: transfers 12, bytes 6291456,' $tmp/s2-rocelab.txt"

dp pairs --topology "$tmp/s2.yaml" --coll "op=sendrecv,pairs=0>4+1>2,sizes=1M,data=on" \
  > "$tmp/pairs.txt" 2> "$tmp/pairs.err"; rc=$?
check "pairs 0>4+1>2: exit 0 ($rc), no wrong element, 1 NVLink pair (2 transfers)" \
  "[ $rc -eq 0 ] && grep -q '^# nvlink: transfers 2, bytes 1048576,' $tmp/pairs.txt && \
   awk '/^ +1048576 / { exit !(\$9 == 0) }' $tmp/pairs.txt"

dp bad --topology "$tmp/s2.yaml" --coll "op=sendrecv,pairs=3>9" > /dev/null 2> "$tmp/bad.err"; rc=$?
check "pairs=3>9 of 8 ranks: exit 2 ($rc), the pair named" \
  "[ $rc -eq 2 ] && grep -qF 'pairs=3>9: rank 9 is outside the 8 ranks (0..7)' $tmp/bad.err"
dp shift --topology "$tmp/s2.yaml" --coll "op=sendrecv,shift=8" > /dev/null 2> "$tmp/shift.err"; rc=$?
check "shift=8 of 8 ranks: exit 2 ($rc), the shift named" \
  "[ $rc -eq 2 ] && grep -qF 'shift=8: must be 1..7 with 8 ranks' $tmp/shift.err"
tap_done
