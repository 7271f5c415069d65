#!/usr/bin/env bash
# NVLink hops through rocelab-dp (issue 40, virtual clock): ranks that are GPUs
# of one server talk over the intra-server model, never through the fabric.
#   - 2 servers x 4 GPUs on one leaf (rocelab-topo --generate, meta layout), a
#     1 MiB ring AllReduce with data=on in server order: no wrong element; the
#     "# nvlink:" line counts the 6 in-server connections' 6 x 14 transfers of
#     131072 B, and "# gates:" says those waited for data or a slot only, the
#     2 x 14 network messages for no PXN copy; the links of s0-g1, s0-g2, s1-g1, s1-g2 (both ring neighbours
#     in their server) carry no frame, those of the 4 GPUs at a network hop do;
#     --workers 2 and mpirun -np 2 (where built in) give the same lines;
#   - order=nccl deals the ranks in NCCL's ring order (GPU 0, 3, 2, 1 of each
#     server): the last GPU, 1, reaches the network through GPU 0's NIC (PXN),
#     so the links of GPUs 1, 2 and 3 idle and GPU 0's carries both ways; the
#     data is right; with 4 channels each channel has its own ring and NIC, so
#     every GPU's link carries frames both ways; on a topology without servers
#     order=nccl is refused (exit 2, the host named);
#   - a topology without servers prints what it printed before servers were
#     wired in (data/coll-no-servers.expect, written by the build before,
#     on data/coll-no-servers.yaml: experiments/clos-2x4x4-emulated.yaml);
#   - a server whose GPUs are on two leaves, cut into two partitions by
#     --workers 2 (and mpirun -np 2, where built in): exit 2 naming the server
#     and "spans partitions";
#   - no DPDK runtime directory is left behind.
# usage: test_coll_nvlink.sh ROCELAB_DP ROCELAB_TOPO DATA_DIR
set -u
DP=$1 TOPO_TOOL=$2 DATA=$3
CLOS=$(realpath "$DATA/coll-no-servers.yaml")
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done
names=()

# FILE "IDLE GPUS" "BUSY GPUS": how many GPUs of each list are as named in FILE's
# link table (link (from>to) state packets bytes ...): idle, no packet and no byte
# either way; busy, packets both ways. Prints "IDLE-OK BUSY-OK".
gpu_links() {
  local quiet=0 busy=0 g
  for g in $2; do
    awk -v a="$g>leaf0" -v b="leaf0>$g" '($1 == a || $1 == b) && $3 == 0 && $4 == 0 { n++ } END { exit n != 2 }' \
      "$1" && quiet=$((quiet + 1))
  done
  for g in $3; do
    awk -v a="$g>leaf0" -v b="leaf0>$g" '($1 == a || $1 == b) && $3 > 0 { n++ } END { exit n != 2 }' \
      "$1" && busy=$((busy + 1))
  done
  echo "$quiet $busy"
}

dp() { # NAME-SUFFIX ARGS...: one run with a unique --name and a timeout
  local name="rl-nvl-$$-$1"; shift
  names+=("$name")
  timeout 120 "$DP" --clock virtual --flows 0 --name "$name" "$@"
}

"$TOPO_TOOL" --generate servers=2,gpus=4,layout=meta,spines=2 -o "$tmp/meta.yaml"
COLL='op=allreduce,sizes=1M,chunk=512K,data=on'
dp w1 --topology "$tmp/meta.yaml" --coll "$COLL" > "$tmp/w1.txt" 2> "$tmp/w1.err"; rc=$?
check "2 x 4 GPUs: exit 0 ($rc), no wrong element" \
  "[ $rc -eq 0 ] && grep -Eq '^ +1048576 +262144 +float +sum +-1 .* 0( +N/A){4}\$' $tmp/w1.txt"
check "the nvlink line: 84 transfers, 11010048 bytes, 6 of 8 connections" \
  "grep -qx '# nvlink: transfers 84, bytes 11010048, connections 6 of 8' $tmp/w1.txt"
# "# gates:" as numbers: nvlink data cts slot pxn queue, network data cts slot pxn queue
check "the gates line: the 84 NVLink transfers waited for data or a slot only; 28 network messages (2 x 14), no PXN" \
  "awk '/^# gates:/ { gsub(/[a-z]+=|[;#]/, \"\"); n++; ok = \$3 + \$5 == 84 && \$4 + \$6 + \$7 == 0 && \$9 + \$10 + \$11 + \$12 + \$13 == 28 && \$12 == 0 } END { exit !(n == 1 && ok) }' $tmp/w1.txt"
# a GPU whose two ring neighbours are in its server sends and receives nothing on its link
links=$(gpu_links "$tmp/w1.txt" "s0-g1 s0-g2 s1-g1 s1-g2" "s0-g0 s0-g3 s1-g0 s1-g3")
check "links: the 4 GPUs without a network hop idle (${links% *} of 4), the 4 with one busy (${links#* } of 4)" \
  "[ '$links' = '4 4' ]"
# s0-g3 sends its 14 segments of 131072 B to s1-g0 over the leaf: at least their payload
check "s0-g3>leaf0 carries at least 14 x 131072 B" \
  "awk '\$1 == \"s0-g3>leaf0\" && \$4 >= 14 * 131072 { f = 1 } END { exit !f }' $tmp/w1.txt"
dp w2 --workers 2 --topology "$tmp/meta.yaml" --coll "$COLL" > "$tmp/w2.txt" 2> "$tmp/w2.err"; rc=$?
check "--workers 2: exit 0 ($rc), the same collective lines" \
  "[ $rc -eq 0 ] && diff <(grep '^ *[0-9]\\|^# nvlink\\|^# latency' $tmp/w1.txt) <(grep '^ *[0-9]\\|^# nvlink\\|^# latency' $tmp/w2.txt) > /dev/null"

# order=nccl: ring s0-g0 s0-g3 s0-g2 s0-g1 s1-g0 s1-g3 s1-g2 s1-g1
dp nccl --topology "$tmp/meta.yaml" --coll "$COLL,order=nccl" > "$tmp/nccl.txt" 2> "$tmp/nccl.err"; rc=$?
links=$(gpu_links "$tmp/nccl.txt" "s0-g1 s0-g2 s0-g3 s1-g1 s1-g2 s1-g3" "s0-g0 s1-g0")
check "order=nccl: exit 0 ($rc), no wrong element, 84 NVLink transfers" \
  "[ $rc -eq 0 ] && grep -Eq '^ +1048576 .* 0( +N/A){4}\$' $tmp/nccl.txt && grep -q '^# nvlink: transfers 84,' $tmp/nccl.txt"
check "order=nccl: GPUs 1, 2 and 3 idle (${links% *} of 6), GPU 0 sends and receives the hops (${links#* } of 2)" \
  "[ '$links' = '6 2' ]"
dp nccl4 --topology "$tmp/meta.yaml" --coll "$COLL,order=nccl,channels=4" > "$tmp/nccl4.txt" 2> "$tmp/nccl4.err"; rc=$?
links=$(gpu_links "$tmp/nccl4.txt" "" "s0-g0 s0-g1 s0-g2 s0-g3 s1-g0 s1-g1 s1-g2 s1-g3")
check "order=nccl, 4 channels: exit 0 ($rc), no wrong element, every GPU's link busy (${links#* } of 8)" \
  "[ $rc -eq 0 ] && grep -Eq '^ +1048576 .* 0( +N/A){4}\$' $tmp/nccl4.txt && [ '$links' = '0 8' ]"
dp nccl-plain --topology "$DATA/coll-no-servers.yaml" --coll "op=allreduce,order=nccl" > /dev/null 2> "$tmp/np.err"; rc=$?
check "order=nccl without servers: exit 2 ($rc), the host named ($(grep -m1 -o "host '[^']*' is not a GPU of a server" "$tmp/np.err"))" \
  "[ $rc -eq 2 ] && grep -q \"order=nccl: host 'h0' is not a GPU of a server\" $tmp/np.err"

# without servers: the lines of the build before servers, byte for byte
for v in "op=allreduce,sizes=64K:256K,qps=4,mode=split,chunk=32K" "model=nccl,op=allreduce,sizes=1M,qps=4,mode=split"; do
  dp plain --quiet --topology "$CLOS" --coll "$v" 2> /dev/null; echo "rc=$?"
done > "$tmp/plain.txt"
check "no servers: output as before ($(diff "$DATA/coll-no-servers.expect" "$tmp/plain.txt" | head -2 | tr '\n' ' '))" \
  "cmp -s $DATA/coll-no-servers.expect $tmp/plain.txt"

# a server across two leaves, the leaves in two partitions
"$TOPO_TOOL" --generate servers=2,gpus=2,layout=rail,spines=1 -o "$tmp/rail.yaml"
dp split --workers 2 --topology "$tmp/rail.yaml" --coll "op=allreduce,sizes=64K" > /dev/null 2> "$tmp/split.err"; rc=$?
check "a server split over partitions: exit 2 ($rc), the reason ($(grep -m1 -o 'server.*partitions' "$tmp/split.err"))" \
  "[ $rc -eq 2 ] && grep -q 'server s0 spans partitions' $tmp/split.err"

# under mpirun (where Open MPI is built in): the same lines on 2 ranks; the split server refused
if command -v mpirun > /dev/null && ldd "$DP" | grep -q libmpi; then
  mpi() { # NAME-SUFFIX ARGS...
    local name="rl-nvl-$$-$1"; shift
    names+=("$name")
    # (Open MPI's own allocations are not freed at exit: no leak check, as test_partitions_mpi.sh)
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 120 mpirun --oversubscribe \
      $([ "$(id -u)" -eq 0 ] && echo --allow-run-as-root) --mca btl self,vader -np 2 \
      "$DP" --clock virtual --flows 0 --name "$name" "$@"
  }
  mpi m2 --topology "$tmp/meta.yaml" --coll "$COLL" > "$tmp/m2.txt" 2>&1; rc=$?
  check "under mpirun -np 2: exit 0 ($rc), the same collective lines" \
    "[ $rc -eq 0 ] && diff <(grep '^ *[0-9]\\|^# nvlink\\|^# latency' $tmp/w1.txt) <(grep '^ *[0-9]\\|^# nvlink\\|^# latency' $tmp/m2.txt) > /dev/null"
  mpi msplit --topology "$tmp/rail.yaml" --coll "op=allreduce,sizes=64K" > "$tmp/msplit.txt" 2>&1; rc=$?
  check "under mpirun -np 2: the split server refused, exit 2 ($rc)" \
    "[ $rc -eq 2 ] && grep -q 'server s0 spans partitions' $tmp/msplit.txt"
fi

left=0
for n in "${names[@]}"; do
  for d in "/var/run/dpdk/$n" "/var/run/dpdk/$n"-r*; do [ -e "$d" ] && left=$((left + 1)); done
done
check "no DPDK runtime directory left behind ($left)" "[ $left -eq 0 ]"
tap_done
