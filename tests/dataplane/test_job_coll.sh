#!/usr/bin/env bash
# rocelab-dp --job-coll (issue 41, the settings of --workload's collectives):
# a Chakra AllReduce of 1 MiB over 8 ranks (chakra_write.py ar8) on
# data/coll-no-servers.yaml (8 emulated hosts h0..h7, 2 leaves).
#   - qps=4,mode=split: the job's collective has the active_qps_max of a plain
#     --coll with the same keys (its totals line), and 4 times that of the job
#     without --job-coll (1 QP per connection: --coll's default);
#   - model=nccl: the job's collective's time and busbw are those of a plain
#     --coll ...,model=nccl of the same size (its 13-column line: time to 0.1 us);
#   - order=nccl on 2 servers x 4 GPUs (rocelab-topo --generate, meta layout):
#     the job's ring is NCCL's channel ring, GPU 0, 3, 2, 1 of each server, whose
#     network hop leaves through GPU 0's NIC (PXN from GPU 1), so the links of
#     GPUs 1, 2 and 3 carry no frame and GPU 0's do (as test_coll_nvlink.sh's
#     --coll ...,order=nccl); without it, GPUs 1 and 2 idle;
#   - refused with exit 2: a key the job decides (op, hosts, sizes, iters), by
#     name; a value ne_coll refuses (its message); --job-coll without
#     --workload; order=nccl on hosts that are no servers' GPUs.
# usage: test_job_coll.sh ROCELAB_DP ROCELAB_TOPO DATA_DIR
set -u
DP=$1 TOPO_TOOL=$2 DATA=$3
TOPO=$(realpath "$DATA/coll-no-servers.yaml")
WRITE="/usr/bin/python3 $(dirname "$0")/chakra_write.py"
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done
names=()

dp() { # NAME-SUFFIX ARGS...: one run with a unique --name and a timeout
  local name="rl-jc-$$-$1"; shift
  names+=("$name")
  timeout 120 "$DP" --clock virtual --flows 0 --name "$name" "$@"
}
# FILE COLUMN: a column of the job's first instance line (7 time, 8 busbw, 9 qps)
job_col() { awk -v c="$2" '$1 == 1 && $2 == 1 { print $c; exit }' "$1"; }
# FILE: active_qps_max= of a plain --coll's totals
coll_qps() { sed -n 's/.* active_qps_max=\([0-9]*\).*/\1/p' "$1" | head -1; }

$WRITE "$tmp/ar8" ar8 1048576
dp base --topology "$TOPO" --quiet --workload "chakra:$tmp/ar8" > "$tmp/base.txt" 2>&1; rc0=$?
dp q4 --topology "$TOPO" --quiet --workload "chakra:$tmp/ar8" --job-coll qps=4,mode=split > "$tmp/q4.txt" 2>&1; rc=$?
dp q4c --topology "$TOPO" --coll op=allreduce,sizes=1M,qps=4,mode=split > "$tmp/q4c.txt" 2>&1
q1=$(job_col "$tmp/base.txt" 9) q4=$(job_col "$tmp/q4.txt" 9) want=$(coll_qps "$tmp/q4c.txt")
check "qps=4: exit 0 ($rc0, $rc), active_qps_max $q4 = --coll's $want = 4 x $q1 (1 QP)" \
  "[ $rc0 -eq 0 ] && [ $rc -eq 0 ] && [ -n '$want' ] && [ '$q4' = '$want' ] && [ -n '$q1' ] && [ \$(( 4 * $q1 )) -eq '$q4' ]"

dp nccl --topology "$TOPO" --quiet --workload "chakra:$tmp/ar8" --job-coll model=nccl > "$tmp/nccl.txt" 2>&1; rc=$?
dp ncclc --topology "$TOPO" --coll op=allreduce,sizes=1M,model=nccl > "$tmp/ncclc.txt" 2>&1
got=$(awk '$1 == 1 && $2 == 1 { printf "%.1f %.2f", $7, $8 }' "$tmp/nccl.txt")
want=$(awk '/^ +[0-9]+ +[0-9]+ +float/ { printf "%.1f %.2f", $6, $8; exit }' "$tmp/ncclc.txt")
base=$(awk '$1 == 1 && $2 == 1 { printf "%.1f %.2f", $7, $8 }' "$tmp/base.txt")
check "model=nccl: exit 0 ($rc), time and busbw '$got' as --coll model=nccl's '$want' (rocelab's: '$base')" \
  "[ $rc -eq 0 ] && [ -n '$want' ] && [ '$got' = '$want' ]"

# order=nccl: the links of a GPU whose two ring neighbours are in its server carry nothing
"$TOPO_TOOL" --generate servers=2,gpus=4,layout=meta,spines=2 -o "$tmp/meta.yaml"
# FILE "GPUS": how many of GPUS have no packet either way on their leaf link
idle() {
  local n=0 g
  for g in $2; do
    awk -v a="$g>leaf0" -v b="leaf0>$g" '($1 == a || $1 == b) && $3 == 0 { k++ } END { exit k != 2 }' \
      "$1" && n=$((n + 1))
  done
  echo $n
}
dp ord --topology "$tmp/meta.yaml" --workload "chakra:$tmp/ar8" --job-coll order=nccl > "$tmp/ord.txt" 2>&1; rc=$?
dp hosts --topology "$tmp/meta.yaml" --workload "chakra:$tmp/ar8" > "$tmp/hosts.txt" 2>&1; rc2=$?
check "order=nccl: exit 0 ($rc), GPUs 1, 2 and 3 idle ($(idle "$tmp/ord.txt" "s0-g1 s0-g2 s0-g3 s1-g1 s1-g2 s1-g3") of 6), GPU 0 not ($(idle "$tmp/ord.txt" "s0-g0 s1-g0") idle)" \
  "[ $rc -eq 0 ] && [ $(idle "$tmp/ord.txt" "s0-g1 s0-g2 s0-g3 s1-g1 s1-g2 s1-g3") -eq 6 ] && [ $(idle "$tmp/ord.txt" "s0-g0 s1-g0") -eq 0 ]"
check "without it (order=hosts): exit 0 ($rc2), GPUs 1 and 2 idle ($(idle "$tmp/hosts.txt" "s0-g1 s0-g2 s1-g1 s1-g2") of 4)" \
  "[ $rc2 -eq 0 ] && [ $(idle "$tmp/hosts.txt" "s0-g1 s0-g2 s1-g1 s1-g2") -eq 4 ]"

refused() { # NAME WANT ARGS...: exit 2 and stderr holding WANT
  local name=$1 want=$2; shift 2
  dp "$name" --topology "$TOPO" --check "$@" > /dev/null 2> "$tmp/$name.err"; local rc=$?
  check "refused: $name: exit 2 ($rc), '$want'" "[ $rc -eq 2 ] && grep -qF -- \"$want\" $tmp/$name.err"
}
for k in op=alltoall hosts=h0+h1 sizes=1M iters=5 inplace=on; do
  refused "key-${k%%=*}" "--job-coll $k: key '${k%%=*}' is not a job's to set" --workload "chakra:$tmp/ar8" --job-coll "$k"
done
refused bad-qps "--job-coll: qps=x" --workload "chakra:$tmp/ar8" --job-coll qps=x
refused no-workload "--job-coll sets the collectives of a job: give --workload" --job-coll qps=4
refused order-no-servers "--job-coll: order=nccl: host 'h0' is not a GPU of a server" \
  --workload "chakra:$tmp/ar8" --job-coll order=nccl

check "no DPDK runtime directory left behind" "[ $(dpdk_left "${names[@]}") -eq 0 ]"
tap_done
