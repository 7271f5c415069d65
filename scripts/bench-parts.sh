#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Benchmark of the partitioned virtual clock (rocelab-dp --workers N,
# dataplane/parallel/dp_part.h): the same workload with 1 worker and with N, in the
# same run, on the same build. Prints the run loop's wall time (the 'ran'
# line: set-up excluded), the process's CPU time, the speed-up (wall with 1
# over wall with N) and whether the output is identical (it must be).
#
# Workloads:
#   ns3   the ns-3 comparison: 8 leaves x 8 spines x 16 hosts, 100G, 1 us
#         links, 128 UDP senders at line rate (1042-byte frames), host (l,h) ->
#         ((l+1) mod 8, h), 1 ms. Enough mbufs that the pool never runs dry
#         (a dry pool makes a partitioned run timing-dependent).
#   live  the live clock: 64-byte frames h0 -> h4 through leaf-spine-leaf on
#         net_null hosts (tests/bench/null-2x2.yaml), busy polling, 3 s:
#         frames delivered per second with N workers against 1 (leaf0 and
#         spine0 in one partition, leaf1 and spine1 in the other). Wall
#         clock: --rounds R (3) rounds, each running 1 and N workers in turn;
#         medians, their ratio, the spread. --both adds the same with a
#         generator each way (h0 -> h4 and h4 -> h0: each partition generates,
#         the work per frame balanced between them)
#   ring  a ring AllReduce of 8 MiB over 256 emulated NICs on a 16 leaves x
#         8 spines x 16 hosts 100G Clos, data=off, ring order interleaving the
#         leaves. Each NIC runs in its leaf's partition, the collective
#         split by rank (dataplane/hosts/dp_coll.h); then the same with
#         --nics-together (every NIC and the collective in partition 0, the
#         switches in the others: the cut before lanes).
#   sweep the same ring as a sweep of sizes 2, 4 and 8 MiB (each size 10 us
#         after the last ended), in lanes and with --nics-together: the
#         next size starts as a global event, scheduled once every lane
#         ended the size.
#
#   nccl  the paper's NCCL-model runs as scripts/experiment.py makes them
#         (e1-nccl-128's shape: 8 leaves x 16 hosts, 16 spines, 400G; NCCL's
#         model with the proxy threads' costs, 2 channels, 16 QPs split, 16 MiB,
#         an active-QP series file), in lanes and with --nics-together (where
#         proxy costs and series kept the NICs before Dec 1 2026).
#
# At the start and at the end it prints the machine's cross-core cache-line round trip
# (tests/bench/bench_xcore): what a frame crossing partitions on threads pays; on the
# shared VMs here it moved between 32 and 869 ns within an hour, so a speed-up is read
# with the figure beside it.
#
# --mpi also runs ns3, ring and sweep as mpirun -np N (the partitions as MPI ranks,
# Open MPI's shared memory between them; in ring each rank runs its leaves'
# NICs, as the threads do) and compares it with --workers N.
#
# usage: scripts/bench-parts.sh [--build DIR] [--workers "2 4"] [--only ns3|ring|sweep|nccl|live] [--mpi]
#                               [--rounds R] [--both]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build WORKERS="2" ONLY="" MPI=0 LIVE_ROUNDS=3 LIVE_BOTH=
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --mpi) MPI=1; shift ;;
    --rounds) LIVE_ROUNDS=$2; shift 2 ;;
    --both) LIVE_BOTH=1; shift ;;
    -h|--help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-parts.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
DP=$BUILD/dataplane/rocelab-dp TOPO=$BUILD/topology/rocelab-topo
[ -x "$DP" ] && [ -x "$TOPO" ] || { echo "bench-parts.sh: build first (meson setup $BUILD && ninja -C $BUILD)" >&2; exit 2; }
[ "$MPI" = 0 ] || command -v mpirun > /dev/null || { echo "bench-parts.sh: --mpi: mpirun not found (apt install openmpi-bin)" >&2; exit 2; }
TMP=$(mktemp -d /tmp/rl-bench-parts.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# run NAME WORKERS ARGS...: $TMP/NAME.wW.{out,err,cpu}; with $LAUNCH=mpi, as
# WORKERS MPI ranks instead of threads: $TMP/NAME.mW.*
run() {
  local name=$1 w=$2 tag=w$2 pre=() opt=(--workers "$2"); shift 2
  if [ "${LAUNCH:-}" = mpi ]; then
    tag=m$w opt=()
    pre=(mpirun --oversubscribe --mca btl self,vader -np "$w"); [ "$(id -u)" != 0 ] || pre+=(--allow-run-as-root)
  fi
  /usr/bin/time -f "%U %S %M" -o "$TMP/$name.$tag.cpu" timeout 3600 "${pre[@]}" "$DP" --clock virtual \
    --name "rl-bparts-$$-$name-$tag" "${opt[@]}" "$@" > "$TMP/$name.$tag.out" 2> "$TMP/$name.$tag.err"
}
loop_wall() { sed -n 's/^rocelab-dp: ran .* in \([0-9.]*\) s of wall time.*/\1/p' "$1"; }
events() { sed -n 's/^rocelab-dp: ran .* s of wall time, \([0-9]*\) events.*/\1/p' "$1"; }
same() { cmp -s <(sed 's/ in [0-9.]* s of wall time//; s/ ([0-9.]* M per wall second)//' "$1") \
                <(sed 's/ in [0-9.]* s of wall time//; s/ ([0-9.]* M per wall second)//' "$2"); }

bench() { # NAME TITLE ARGS...
  local name=$1 title=$2; shift 2
  echo "== $title"
  run "$name" 1 "$@" || { echo "  --workers 1 FAILED: $(tail -1 "$TMP/$name.w1.err")"; return 1; }
  local w1; w1=$(loop_wall "$TMP/$name.w1.out")
  read -r u s m < "$TMP/$name.w1.cpu"
  printf '  --workers 1: %8.2f s wall (run loop), %7.2f s CPU, %s events\n' "$w1" "$(echo "$u + $s" | bc)" "$(events "$TMP/$name.w1.out")"
  for w in $WORKERS; do
    run "$name" "$w" "$@" || { echo "  --workers $w FAILED: $(tail -1 "$TMP/$name.w$w.err")"; continue; }
    local wn; wn=$(loop_wall "$TMP/$name.w$w.out")
    read -r u s m < "$TMP/$name.w$w.cpu"
    printf '  --workers %s: %8.2f s wall (run loop), %7.2f s CPU, speed-up %.2fx, output %s\n' "$w" "$wn" \
      "$(echo "$u + $s" | bc)" "$(echo "$w1 / $wn" | bc -l)" \
      "$(same "$TMP/$name.w1.out" "$TMP/$name.w$w.out" && echo identical || echo DIFFERENT)"
    grep -h 'partitions, lookahead' "$TMP/$name.w$w.err" | tr '\r' '\n' | tail -1 | sed 's/^rocelab-dp: /    /'
    grep -h '^rocelab-dp: emulated NICs' "$TMP/$name.w$w.err" | sed 's/^rocelab-dp: /    /' || true  # (none without NICs)
    # the balance: each partition's share of the loop running its windows
    grep -h '^rocelab-dp: partition [0-9]*: ' "$TMP/$name.w$w.err" | sed 's/^rocelab-dp: /    /; s/ (running windows.*//'
    [ "$MPI" = 1 ] || continue
    LAUNCH=mpi run "$name" "$w" "$@" || { echo "  mpirun -np $w FAILED: $(tail -1 "$TMP/$name.m$w.err")"; continue; }
    local wm; wm=$(loop_wall "$TMP/$name.m$w.out")
    read -r u s m < "$TMP/$name.m$w.cpu"
    printf '  mpirun -np %s: %7.2f s wall (run loop), %7.2f s CPU, speed-up %.2fx, %.2fx of --workers %s, output %s\n' \
      "$w" "$wm" "$(echo "$u + $s" | bc)" "$(echo "$w1 / $wm" | bc -l)" "$(echo "$wn / $wm" | bc -l)" "$w" \
      "$(same "$TMP/$name.w1.out" "$TMP/$name.m$w.out" && echo identical || echo DIFFERENT)"
    grep -h 'partitions, lookahead' "$TMP/$name.m$w.err" | tr '\r' '\n' | tail -1 | sed 's/^rocelab-dp: /    /'
    grep -h '^rocelab-dp: emulated NICs' "$TMP/$name.m$w.err" | sed 's/^rocelab-dp: /    /' || true
  done
}

echo "rocelab bench-parts: $(nproc) cores, $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%FT%TZ)"
# The machine's cross-core line round trip, at the start and at the end: a frame that
# crosses partitions pays it, and on a shared VM it moves by 5x within minutes.
xcore() {
  local x=$BUILD/tests/bench/bench_xcore
  [ -x "$x" ] && echo "machine ($1): $(timeout 60 "$x" --samples 5 --trips 200000 2>&1 || echo 'cross-core round trip: not measured (more than 60 s, or it failed)')" || true
}
xcore start
trap 'xcore end; rm -rf "$TMP"' EXIT
if [ -z "$ONLY" ] || [ "$ONLY" = ns3 ]; then
  "$TOPO" --generate spines=8,leaves=8,hosts=16,attach=veth -o "$TMP/ns3.yaml" > /dev/null
  . scripts/ns3-workload.sh
  ns3_gens
  bench ns3 "ns-3 comparison: 8 x 8 x 16, 100G, 128 senders at line rate, 1 ms" \
    --topology "$TMP/ns3.yaml" --duration 1ms --flows 0 "${ns3_pool[@]}" "${gens[@]}"
fi
# ring_pair NAME SIZES WHAT: the 256-rank ring AllReduce of SIZES (ring order
# interleaving the leaves) in lanes, then with --nics-together (the cut before lanes)
ring_pair() {
  local name=$1 sizes=$2 what=$3 order
  [ -f "$TMP/ring.yaml" ] || "$TOPO" --generate spines=8,leaves=16,hosts=16,attach=emulated,host-mtu=9000 -o "$TMP/ring.yaml" > /dev/null
  order=$(python3 -c "print('+'.join(f'h{l * 16 + i}' for i in range(16) for l in range(16)))")
  bench "$name" "ring AllReduce, 256 emulated NICs, 16 x 8 x 16 100G Clos, $what, data=off" \
    --topology "$TMP/ring.yaml" --flows 0 --coll "op=allreduce,sizes=$sizes,data=off,qps=1,hosts=$order"
  bench "$name-together" "the same with every NIC in partition 0 (--nics-together: the cut before lanes)" \
    --topology "$TMP/ring.yaml" --flows 0 --coll "op=allreduce,sizes=$sizes,data=off,qps=1,hosts=$order" \
    --nics-together
}
if [ -z "$ONLY" ] || [ "$ONLY" = ring ]; then
  ring_pair ring 8M "8 MiB"
fi
if [ -z "$ONLY" ] || [ "$ONLY" = sweep ]; then
  ring_pair sweep 2M:8M "a sweep of 2, 4 and 8 MiB"
fi
if [ -z "$ONLY" ] || [ "$ONLY" = nccl ]; then
  "$TOPO" --generate spines=16,leaves=8,hosts=16,host-rate=400G,leaf-rate=400G,host-mtu=9000,attach=emulated \
    -o "$TMP/nccl.yaml" > /dev/null
  nccl=op=allreduce,sizes=16M,data=off,sport=rxe,model=nccl,NCCL_MIN_NCHANNELS=2,NCCL_MAX_NCHANNELS=2
  nccl+=,NCCL_IB_QPS_PER_CONNECTION=16,NCCL_IB_SPLIT_DATA_ON_QPS=1,proxy_post_wqe=200ns,proxy_poll_cqe=100ns
  bench nccl "NCCL model, 128 ranks (8 x 16 hosts, 16 spines, 400G), proxy costs, 16 QPs split, 16 MiB, a series file" \
    --topology "$TMP/nccl.yaml" --nic quantum=16K,msgrate=215000000 --coll "$nccl" --coll-series "$TMP/nccl.csv"
  bench nccl-together "the same with every NIC in partition 0 (--nics-together: where proxy costs and series kept them)" \
    --topology "$TMP/nccl.yaml" --nic quantum=16K,msgrate=215000000 --coll "$nccl" --coll-series "$TMP/nccl.csv" \
    --nics-together
fi
if [ -z "$ONLY" ] || [ "$ONLY" = live ]; then
  # live: wall-clock Mpps, so ROUNDS rounds, each running every worker count
  # once (interleaved: a busy moment hits both), 3 s each; the median of each
  # and the ratio of the medians, with the spread (min-max of the rounds)
  live_run() { # TAG WORKERS GEN...: $TMP/live.TAG.{out,err}; prints Mpps delivered to h4 (and h0)
    local tag=$1 w=$2; shift 2
    local g=(); for x in "$@"; do g+=(--gen "$x"); done
    timeout 60 "$DP" --topology tests/bench/null-2x2.yaml --clock live --busy-poll --duration 3s \
      --workers "$w" --name "rl-bparts-$$-live-$tag" "${g[@]}" > "$TMP/live.$tag.out" 2> "$TMP/live.$tag.err" || true
    awk '($1 == "h4" || $1 == "h0") && NF == 5 { n += $4 } END { if (n) printf "%.3f", n / 3e6 }' "$TMP/live.$tag.out"
  }
  live_bench() { # TITLE GEN...
    local title=$1; shift
    echo "== live clock, net_null hosts, 64 B $title through leaf-spine-leaf, busy poll, 3 s, $LIVE_ROUNDS rounds"
    declare -A ALL=()
    for r in $(seq "$LIVE_ROUNDS"); do
      for w in 1 $WORKERS; do
        ALL[$w]+="$(live_run "$w.$r" "$w" "$@") "
      done
    done
    for w in 1 $WORKERS; do
      read -r med lo hi < <(echo "${ALL[$w]}" | tr ' ' '\n' | grep . | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) printf "%.3f %.3f %.3f\n", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }')
      [ -n "${med:-}" ] || { echo "  --workers $w: FAILED: $(tail -1 "$TMP/live.$w.1.err")"; continue; }
      [ "$w" = 1 ] && MED1=$med
      printf '  --workers %s: %s Mpps delivered (median; rounds %s-%s)%s\n' "$w" "$med" "$lo" "$hi" \
        "$([ "$w" != 1 ] && python3 -c "print(f', {$med / max($MED1, 1e-9):.2f}x of 1 worker')")"
      [ "$w" = 1 ] || tr '\r' '\n' < "$TMP/live.$w.$LIVE_ROUNDS.err" | grep -h 'world stops\|^rocelab-dp: partition' | sed 's/^rocelab-dp: /    last round: /'
    done
  }
  live_bench "h0 -> h4" 'h0>h4:size=64,rate=100G,count=1000000000,flows=64'
  # the same both ways: each partition runs a generator and receives the other's
  [ -n "$LIVE_BOTH" ] && live_bench "h0 -> h4 and h4 -> h0" 'h0>h4:size=64,rate=100G,count=1000000000,flows=64' \
    'h4>h0:size=64,rate=100G,count=1000000000,flows=64'
fi
