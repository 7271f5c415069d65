#!/usr/bin/env bash
# bench-nic.sh: the emulated-NIC path at 128 ranks (issue 13), as figures and
# ratios, never as a pass/fail timing.
#
#   1. reference: the generator path on the default topology (64 B packets
#      h0 -> h4 through 3 switches, virtual clock): switch forwards per wall
#      second, measured in the same run so the ratios hold on a shared machine;
#   2. a ring AllReduce over 128 emulated NICs on a 16-leaf x 8-spine x 8-host
#      100G Clos (1 us links, path MTU 4096), ring order interleaving the
#      leaves (every hop crosses the fabric), data=off, for each size and QP
#      count: virtual time, wall time, events and switch forwards per wall
#      second, and the forwards ratio to the reference (issue 13's figure:
#      0.04-0.18 before, target >= 0.5);
#   3. the ns-3 comparison workload: 8 leaves x 8 spines x 16 hosts, 100G,
#      1 us links, host (l,h) sends UDP at line rate with 1000-byte payloads
#      to host ((l+1) mod 8, h) for 1 ms of simulated time, all 128
#      senders: link transmissions per wall second (Debian's ns-3 3.37:
#      about 28 thousand here);
#   4. with --callgrind: instructions per switch forward (valgrind's
#      callgrind over the event loop only, repeatable on a shared machine) of
#      the generator path (default topology, 100,000 x 64 B h0 -> h4) and of a
#      ring AllReduce of 4 MiB over 16 emulated NICs (4 leaves x 4 spines x 4
#      hosts, the same shape as 2.), for each QP count, and their ratio; and
#      (unless --no-ns3) instructions per link transmission of the ns-3
#      workload cut to 150 us. With --cache-sim also callgrind's simulated
#      cache misses per forward / per transmission: first-level data (32 KiB)
#      and last-level, simulated as 1 MiB 8-way (this machine's L2 per core:
#      frames in flight that no longer fit in it), reads and writes (the
#      machine's VM has no hardware counters for perf stat);
#   5. with --ai1024 SIZES (long: minutes): a ring AllReduce over 1,024
#      emulated NICs with E-ECMP and 16 QPs (split) on a generated 3-tier
#      AI-zone fabric (2 zones x 32 leaves x 16 hosts, 8 spines per zone,
#      4 aggregation switches, 400G, 1 us links), ring order interleaving
#      the leaves of both zones, data=off: virtual time, wall time, CPU time,
#      events and peak RSS (issue 13's target: 64 MiB in <= 10 min, 4 GiB);
#   6. with --servers1024 SIZES (long: minutes): the same 1,024 GPUs as 128
#      servers of 8 (issue 40, "Performance") against 1,024 one-NIC hosts, on
#      the 3-tier fabric of 5. (2 zones x 32 leaves, 8 spines per zone, 4
#      ATSW, 400G, 1 us links; Meta's layout: 2 servers per leaf, GPU i on
#      port i), NCCL's model with one QP and E-ECMP, data=off: servers in
#      NCCL's ring order (order=nccl: 896 of the ring's 1,024 hops on NVLink,
#      timed by the intra-server model), hosts rack by rack (every hop through
#      the fabric). Wall time, CPU time, events and peak RSS side by side, and
#      servers / hosts for each: a ratio measured in the same run.
#
# --reference-build DIR measures a second build (e.g. an older commit built
# in its own directory) the same way, in the same run, next to this one.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
usage: scripts/bench-nic.sh [--build DIR] [--reference-build DIR] [--sizes "8M 64M"]
                            [--qps "1 16"] [--gen-packets N] [--no-ns3] [--no-ring]
                            [--ai1024 "8M 64M"] [--servers1024 "8M"] [--workers N]
                            [--callgrind [--cache-sim]] [--help]
  --build DIR            build directory with dataplane/rocelab-dp [build]
  --reference-build DIR  also measure this build's rocelab-dp, same workloads
  --sizes LIST           AllReduce sizes (K/M/G binary suffixes) [8M 64M]
  --qps LIST             data QPs per connection; more than 1 uses mode=split [1 16]
  --gen-packets N        packets of the generator reference run [2000000]
  --no-ns3               skip the ns-3 comparison workload
  --no-ring              skip the generator reference and the 128-rank AllReduce
  --ai1024 LIST          also the 1,024-rank AllReduce on the generated 3-tier
                         fabric for each size (long: minutes per size)
  --servers1024 LIST     also 1,024 GPUs as 128 servers x 8 against 1,024 one-NIC
                         hosts on that fabric, NCCL model, for each size: wall,
                         events, peak memory and their ratios (long: minutes)
  --workers N            every rocelab-dp run on N partitions (threads) [1];
                         scripts/bench-parts.sh compares 1 and N in one run
  --callgrind            also instructions per switch forward under callgrind
                         (generator path, a 16-rank AllReduce, the ns-3 workload for
                         150 us; a few minutes)
  --cache-sim            with --callgrind: also simulated cache misses (D1, LL) per
                         forward / transmission (slower)
Prints figures; exit 0 when every run finished, 1 when one failed, 2 on bad input.
EOF
}

die_usage() { echo "bench-nic.sh: $1; see --help" >&2; exit 2; }

BUILD=build
REF=""
SIZES="8M 64M"
QPS="1 16"
GEN_PACKETS=2000000
NS3=1
RING=1
AI1024=""
SERVERS1024=""
WORKERS=1
CALLGRIND=0
CACHE_SIM=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) [ $# -ge 2 ] || die_usage "--build needs a directory"; BUILD=$2; shift 2 ;;
    --reference-build) [ $# -ge 2 ] || die_usage "--reference-build needs a directory"; REF=$2; shift 2 ;;
    --sizes) [ $# -ge 2 ] || die_usage "--sizes needs a list"; SIZES=$2; shift 2 ;;
    --qps) [ $# -ge 2 ] || die_usage "--qps needs a list"; QPS=$2; shift 2 ;;
    --gen-packets) [ $# -ge 2 ] || die_usage "--gen-packets needs a number"; GEN_PACKETS=$2; shift 2 ;;
    --no-ns3) NS3=0; shift ;;
    --no-ring) RING=0; shift ;;
    --callgrind) CALLGRIND=1; shift ;;
    --cache-sim) CACHE_SIM=1; shift ;;
    --ai1024) [ $# -ge 2 ] || die_usage "--ai1024 needs a list of sizes"; AI1024=$2; shift 2 ;;
    --servers1024) [ $# -ge 2 ] || die_usage "--servers1024 needs a list of sizes"; SERVERS1024=$2; shift 2 ;;
    --workers) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die_usage "--workers needs a number from 1"; WORKERS=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die_usage "unknown argument '$1'" ;;
  esac
done
WORKERS_ARG=()  # (builds before --workers do not know it: only given when above 1)
[ "$WORKERS" = 1 ] || WORKERS_ARG=(--workers "$WORKERS")
for s in $SIZES $AI1024 $SERVERS1024; do
  [[ $s =~ ^[0-9]+[KMG]?$ ]] || die_usage "--sizes: '$s' is not a size (e.g. 8M)"
done
for q in $QPS; do
  [[ $q =~ ^[0-9]+$ ]] && [ "$q" -ge 1 ] && [ "$q" -le 64 ] || die_usage "--qps: '$q' is not 1..64"
done
[[ $GEN_PACKETS =~ ^[0-9]+$ ]] && [ "$GEN_PACKETS" -ge 1000 ] || \
  die_usage "--gen-packets: '$GEN_PACKETS' is not a number >= 1000"
builds=("$BUILD")
[ -n "$REF" ] && builds+=("$REF")
for b in "${builds[@]}"; do
  [ -x "$b/dataplane/rocelab-dp" ] || die_usage "no $b/dataplane/rocelab-dp (build it first)"
done
[ "$CALLGRIND" = 0 ] || command -v valgrind >/dev/null || die_usage "--callgrind needs valgrind"
[ "$CALLGRIND" = 0 ] || [ "$WORKERS" = 1 ] || die_usage "--callgrind counts one worker only"
[ "$CACHE_SIM" = 0 ] || [ "$CALLGRIND" = 1 ] || die_usage "--cache-sim needs --callgrind"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
LEAVES=16 SPINES=8 HOSTS=8

# A 2-tier Clos of emulated NICs (or plain hosts) as YAML: $1 leaves, $2
# spines, $3 hosts per leaf, $4 attach, $5 file. Host (l,i) is h(l*H+i).
clos_yaml() {
  python3 - "$@" <<'PY'
import sys
L, S, H, attach, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
with open(out, "w") as f:
    f.write(f"name: bench-clos-{L}x{S}x{H}\n")
    f.write("defaults:\n")
    mtu = ", mtu: 9000" if attach == "emulated" else ""
    f.write(f"  host: {{attach: {attach}{mtu}}}\n")
    f.write("  link: {rate: 100G, delay: 1us}\n")
    f.write("switches:\n")
    for l in range(L):
        f.write(f"  - {{name: leaf{l}, role: rtsw}}\n")
    for s in range(S):
        f.write(f"  - {{name: spine{s}, role: ctsw}}\n")
    f.write("hosts:\n")
    for l in range(L):
        for i in range(H):
            f.write(f"  - {{name: h{l * H + i}, leaf: leaf{l}}}\n")
    f.write("links:\n")
    for l in range(L):
        for s in range(S):
            f.write(f"  - [leaf{l}, spine{s}]\n")
PY
}

# rocelab-dp's link table -> the frames sent on links that are up
link_tx() {
  awk '/^link \(from>to\)/ { on = 1; next } on && NF == 0 { on = 0 } on && $2 == "up" { n += $3 } END { print n + 0 }'
}

# "ran V s (virtual) in W s of wall time, E events, F switch forwards" -> "V W E F"
ran_fields() {
  sed -n 's/^rocelab-dp: ran \([0-9.]*\) s (virtual) in \([0-9.]*\) s of wall time, \([0-9]*\) events, \([0-9]*\) switch forwards.*/\1 \2 \3 \4/p'
}

# name, build, args...: rocelab-dp's stdout in $TMP/out, its CPU seconds (user +
# system, less noisy than wall time on a shared machine) in CPU, its peak
# resident set in RSS_MIB (getrusage of the child: DPDK runs with --no-huge,
# so the mbuf pool is counted); its exit status
run_dp() {
  local name=$1 b=$2 rc=0
  shift 2
  python3 -c '
import resource, subprocess, sys
with open(sys.argv[1], "w") as out, open(sys.argv[2], "w") as err:
    rc = subprocess.call(sys.argv[4:], stdout=out, stderr=err)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[3], "w") as f:
    f.write(f"{u.ru_utime + u.ru_stime} {u.ru_maxrss / 1024:.0f}\n")
sys.exit(rc)' "$TMP/out" "$TMP/err" "$TMP/cpu" \
    timeout 1800 "$b/dataplane/rocelab-dp" --clock virtual --name "rl-bnic-$$-$name" "${WORKERS_ARG[@]}" "$@" || rc=$?
  read -r CPU RSS_MIB <"$TMP/cpu"
  # a run whose packet pool ran dry lost frames and resent them: not the workload asked for
  if [ $rc -eq 0 ] && grep -q 'packet pool ran dry' "$TMP/err"; then
    echo "bench-nic.sh: $name: the packet pool ran dry, so frames were lost and resent: not a figure" >>"$TMP/err"
    rc=3
  fi
  return $rc
}

failed=0
clos_yaml $LEAVES $SPINES $HOSTS emulated "$TMP/clos128.yaml"
# ring order interleaving the leaves: leaf0's first host, leaf1's first, ...
order=$(python3 -c "print('+'.join(f'h{l * $HOSTS + i}' for i in range($HOSTS) for l in range($LEAVES)))")

declare -A GEN_RATE GEN_CPU_RATE
for b in "${builds[@]}"; do
  [ "$RING" = 1 ] || break
  echo "== $b: generator reference, default topology, $GEN_PACKETS x 64 B h0 -> h4 (3 switches)"
  if run_dp gen "$b" --topology topologies/default.yaml \
       --gen "h0>h4:size=64,rate=100G,count=$GEN_PACKETS,flows=64"; then
    read -r v w e f < <(ran_fields <"$TMP/out")
    GEN_RATE[$b]=$(python3 -c "print($f / $w)")
    GEN_CPU_RATE[$b]=$(python3 -c "print($f / $CPU)")
    python3 -c "print(f'  {$f} switch forwards in {$w:.3f} s wall ({$CPU:.2f} s CPU): {$f / $w / 1e6:.3f} M forwards/s wall, {$f / $CPU / 1e6:.3f} M per CPU second, {$e / $w / 1e6:.3f} M events/s wall')"
  else
    echo "  FAILED: $(tail -1 "$TMP/err")"; failed=1; GEN_RATE[$b]=0; GEN_CPU_RATE[$b]=0
  fi
done

[ "$RING" = 1 ] || SIZES=""
[ "$RING" = 1 ] && echo "== ring AllReduce, 128 emulated NICs, ${LEAVES} leaves x ${SPINES} spines x ${HOSTS} hosts, 100G, data=off"
[ "$RING" = 1 ] && printf '%-22s %-5s %4s %8s %8s %7s %10s %8s %8s %7s %8s\n' build size qps virt_ms wall_s cpu_s events M_ev/s M_fwd/s ratio cpu_ratio
for s in $SIZES; do
  for q in $QPS; do
    mode=""
    [ "$q" -gt 1 ] && mode=",mode=split"
    for b in "${builds[@]}"; do
      spec="op=allreduce,hosts=$order,sizes=$s,data=off,qps=$q$mode"
      if run_dp "ar-$s-$q" "$b" --topology "$TMP/clos128.yaml" --coll "$spec"; then
        read -r v w e f < <(ran_fields <"$TMP/out")
        python3 - "$b" "$s" "$q" "$v" "$w" "$e" "$f" "${GEN_RATE[$b]}" "$CPU" "${GEN_CPU_RATE[$b]}" <<'PY'
import sys
b, s, q = sys.argv[1:4]
v, w, e, f, g, cpu, gc = (float(x) for x in sys.argv[4:11])
ratio = f"{f / w / g:.3f}" if g > 0 else "-"
cratio = f"{f / cpu / gc:.3f}" if gc > 0 and cpu > 0 else "-"
print(f"{b[-22:]:<22} {s:<5} {q:>4} {v * 1e3:>8.3f} {w:>8.2f} {cpu:>7.2f} {int(e):>10} {e / w / 1e6:>8.3f} "
      f"{f / w / 1e6:>8.3f} {ratio:>7} {cratio:>8}")
PY
      else
        echo "$b $s qps=$q FAILED: $(tail -1 "$TMP/err")"; failed=1
      fi
    done
  done
done
if [ "$RING" = 1 ]; then
  echo "(ratio: switch forwards per wall second / the generator reference's, same build, same run;"
  echo " cpu_ratio: the same per CPU second, less sensitive to other processes on the machine)"
fi

if [ "$NS3" = 1 ]; then
  echo "== ns-3 comparison: 8 leaves x 8 spines x 16 hosts, 100G, 1 us links, UDP at line rate,"
  echo "   1000-byte payloads, host (l,h) -> ((l+1) mod 8, h), all 128 senders, 1 ms"
  clos_yaml 8 8 16 veth "$TMP/ns3.yaml"
  . scripts/ns3-workload.sh
  ns3_gens
  for b in "${builds[@]}"; do
    if run_dp ns3 "$b" --topology "$TMP/ns3.yaml" --duration 1ms "${ns3_pool[@]}" "${gens[@]}"; then
      read -r v w e f < <(ran_fields <"$TMP/out")
      tx=$(link_tx <"$TMP/out")
      python3 -c "print(f'  $b: {$tx} link transmissions in {$w:.2f} s wall ({$CPU:.2f} s CPU): {$tx / $w / 1e6:.3f} M per wall second, {$tx / $CPU / 1e6:.3f} M per CPU second')"
      if grep -q 'pool ran dry' "$TMP/err"; then echo "  $b: $(grep 'pool ran dry' "$TMP/err")"; fi
    else
      echo "  $b FAILED: $(tail -1 "$TMP/err")"; failed=1
    fi
  done
fi
# name, build, args...: callgrind's instruction count of rocelab-dp's event
# loop (dp_engine_step_virtual and below) in IR, its switch forwards in FWD,
# its link transmissions in TX; with --cache-sim the simulated misses in MISS
# ("D1 reads, D1 writes, LL reads, LL writes")
cg_dp() {
  local name=$1 b=$2 sim=()
  shift 2
  [ "$CACHE_SIM" = 0 ] || sim=(--cache-sim=yes --LL=1048576,8,64)
  timeout 1800 valgrind --tool=callgrind --toggle-collect=dp_engine_step_virtual "${sim[@]}" \
    --callgrind-out-file="$TMP/cg.out" "$b/dataplane/rocelab-dp" --clock virtual \
    --name "rl-bnic-$$-cg-$name" "$@" >"$TMP/out" 2>"$TMP/err" || return 1
  IR=$(sed -n 's/^totals: \([0-9]*\).*/\1/p' "$TMP/cg.out")
  # events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
  MISS=$(sed -n 's/^totals: //p' "$TMP/cg.out" | awk 'NF == 9 { print $5, $6, $8, $9 }')
  FWD=$(ran_fields <"$TMP/out" | cut -d' ' -f4)
  TX=$(link_tx <"$TMP/out")
  [ -n "$IR" ] && [ -n "$FWD" ] && [ "$FWD" -gt 0 ]
}

# build, run, instructions, count, per unit, ratio: one line of the callgrind
# table, with the misses per unit (MISS over count) under --cache-sim
cg_line() {
  local misses=""
  [ "$CACHE_SIM" = 0 ] || misses=$(echo "$MISS" | awk -v n="$4" '{ printf "%8.2f %8.2f %8.3f %8.3f", $1 / n, $2 / n, $3 / n, $4 / n }')
  printf '%-22s %-10s %14s %9s %8s %7s %s\n' "$1" "$2" "$3" "$4" "$5" "$6" "$misses"
}

if [ "$CALLGRIND" = 1 ]; then
  clos_yaml 4 4 4 emulated "$TMP/clos16.yaml"
  order16=$(python3 -c "print('+'.join(f'h{l * 4 + i}' for i in range(4) for l in range(4)))")
  echo "== callgrind: instructions per switch forward (event loop only), generator path"
  echo "   (default topology, 100000 x 64 B h0 -> h4) and ring AllReduce 4M, 16 emulated NICs"
  echo "   (4 leaves x 4 spines x 4 hosts, leaves interleaved, data=off)"
  [ "$NS3" = 0 ] || echo "   and per link transmission of the ns-3 workload, 150 us"
  hdr=""
  [ "$CACHE_SIM" = 0 ] || hdr=$(printf '%8s %8s %8s %8s' D1r D1w LLr LLw)
  printf '%-22s %-10s %14s %9s %8s %7s %s\n' build run instructions count per_unit ratio "$hdr"
  for b in "${builds[@]}"; do
    bn=$b
    [ ${#bn} -le 22 ] || bn=${bn: -22}
    if ! cg_dp gen "$b" --topology topologies/default.yaml \
         --gen "h0>h4:size=64,rate=100G,count=100000,flows=64"; then
      echo "$b callgrind generator FAILED: $(tail -1 "$TMP/err")"; failed=1; continue
    fi
    gen_per=$((IR / FWD))
    cg_line "$bn" generator "$IR" "$FWD" "$gen_per" -
    for q in $QPS; do
      mode=""
      [ "$q" -gt 1 ] && mode=",mode=split"
      if cg_dp "ar-$q" "$b" --topology "$TMP/clos16.yaml" \
           --coll "op=allreduce,hosts=$order16,sizes=4M,data=off,qps=$q$mode"; then
        cg_line "$bn" "ring-qps$q" "$IR" "$FWD" "$((IR / FWD))" \
          "$(python3 -c "print(f'{$gen_per / ($IR / $FWD):.3f}')")"
      else
        echo "$b callgrind qps=$q FAILED: $(tail -1 "$TMP/err")"; failed=1
      fi
    done
    if [ "$NS3" = 1 ]; then
      if cg_dp ns3 "$b" --topology "$TMP/ns3.yaml" --duration 150us "${gens[@]}" && [ "$TX" -gt 0 ]; then
        cg_line "$bn" ns3-linktx "$IR" "$TX" "$((IR / TX))" -
      else
        echo "$b callgrind ns-3 FAILED: $(tail -1 "$TMP/err")"; failed=1
      fi
    fi
  done
  echo "(per_unit: instructions per switch forward, for ns3-linktx per link transmission;"
  echo " ratio: the generator's instructions per forward / the ring's, same build)"
fi

if [ -n "$AI1024" ]; then
  spec=zones=2,leaves=32,spines=8,atsw=4,hosts=16,host-rate=400G,leaf-rate=400G,spine-rate=400G
  spec+=,host-delay=1us,leaf-delay=1us,spine-delay=1us,host-mtu=9000,profile=eecmp,attach=emulated,name=ai1024
  echo "== ring AllReduce, 1,024 emulated NICs, generated 3-tier fabric ($spec),"
  echo "   E-ECMP, 16 QPs per connection (split), data=off, ring order interleaving the leaves of both zones"
  # hosts=all takes the topology's host order (kept so that figures compare
  # with earlier runs), so the hosts are listed interleaved in the file:
  # host i of every leaf of zone 0, then of zone 1, for i = 0..15
  "$BUILD/topology/rocelab-topo" --generate "$spec" -o "$TMP/ai.yaml"
  python3 - "$TMP/ai.yaml" <<'PY'
import re, sys
path = sys.argv[1]
lines = open(path).read().split("\n")
s = lines.index("hosts:")
e = s + 1
while e < len(lines) and lines[e].startswith("  - {name:"):
    e += 1
def order(line):  # z<Z>-h<N>, 16 hosts per leaf
    z, h = (int(x) for x in re.match(r"  - \{name: z(\d+)-h(\d+),", line).groups())
    return (h % 16, z, h // 16)
open(path, "w").write("\n".join(lines[:s + 1] + sorted(lines[s + 1:e], key=order) + lines[e:]))
PY
  printf '%-22s %-5s %8s %8s %7s %11s %8s %8s\n' build size virt_ms wall_s cpu_s events M_ev/s rss_MiB
  for s in $AI1024; do
    for b in "${builds[@]}"; do
      # a pool that does not run dry, as e1-nccl-1024's (the default 16,383 frames ran dry
      # some 23,000 times in the first ms: NICs lost frames and go-back-N resent 52,766 in
      # it, a workload that measured the emulator's limit, not the ring)
      if run_dp "ai-$s" "$b" --topology "$TMP/ai.yaml" --mbufs 131071 --mem 2048 \
           --coll "op=allreduce,hosts=all,sizes=$s,data=off,qps=16,mode=split"; then
        read -r v w e f < <(ran_fields <"$TMP/out")
        python3 -c "print(f'{\"$b\"[-22:]:<22} {\"$s\":<5} {$v * 1e3:>8.3f} {$w:>8.1f} {$CPU:>7.1f} {$e:>11} {$e / $w / 1e6:>8.3f} {$RSS_MIB:>8}')"
        grep -v '^#' "$TMP/out" | grep -E '^ *[0-9]+ ' | sed 's/^/    /' || true
      else
        echo "$b $s FAILED: $(tail -1 "$TMP/err" | tail -c 300)"; failed=1
      fi
    done
  done
fi
if [ -n "$SERVERS1024" ]; then
  common=spines=8,atsw=4,host-rate=400G,leaf-rate=400G,spine-rate=400G,host-delay=1us,leaf-delay=1us
  common+=,spine-delay=1us,host-mtu=9000,profile=eecmp,attach=emulated
  "$BUILD/topology/rocelab-topo" --generate "zones=2,leaves=32,hosts=16,$common,name=hosts1024" \
    -o "$TMP/hosts1024.yaml"
  "$BUILD/topology/rocelab-topo" --generate "zones=2,servers=64,gpus=8,layout=meta,$common,name=servers1024" \
    -o "$TMP/servers1024.yaml"
  echo "== 1,024 GPUs: 128 servers x 8 (NVLink inside) against 1,024 one-NIC hosts, the fabric of --ai1024"
  echo "   (2 zones x 32 leaves, 8 spines per zone, 4 ATSW, 400G), NCCL model, 1 QP, E-ECMP, data=off;"
  echo "   servers in NCCL's ring order (order=nccl), hosts rack by rack (hosts=all)"
  printf '%-22s %-5s %-8s %8s %8s %7s %11s %8s\n' build size ranks virt_ms wall_s cpu_s events rss_MiB
  for s in $SERVERS1024; do
    for b in "${builds[@]}"; do
      declare -A fig=()
      for kind in hosts servers; do
        order=""
        [ "$kind" = hosts ] || order=",order=nccl"
        # the packet pool of --ai1024 (e1-nccl-1024's: the default one runs dry at 1,024 NICs)
        if run_dp "$kind-$s" "$b" --topology "$TMP/${kind}1024.yaml" --mbufs 131071 --mem 2048 \
             --coll "op=allreduce,model=nccl,hosts=all$order,sizes=$s,data=off,qps=1"; then
          read -r v w e f < <(ran_fields <"$TMP/out")
          fig[$kind]="$w $CPU $e $RSS_MIB"
          python3 -c "print(f'{\"$b\"[-22:]:<22} {\"$s\":<5} {\"$kind\":<8} {$v * 1e3:>8.3f} {$w:>8.1f} {$CPU:>7.1f} {$e:>11} {$RSS_MIB:>8}')"
          grep -v '^#' "$TMP/out" | grep -E '^ *[0-9]+ ' | sed 's/^/    /' || true
        else
          echo "$b $s $kind FAILED: $(tail -1 "$TMP/err" | tail -c 300)"; failed=1
        fi
      done
      if [ -n "${fig[hosts]:-}" ] && [ -n "${fig[servers]:-}" ]; then
        python3 - ${fig[servers]} ${fig[hosts]} <<'PY'
import sys
sw, sc, se, sr, hw, hc, he, hr = (float(x) for x in sys.argv[1:9])
print(f"    servers / hosts: wall {sw / hw:.3f}, CPU {sc / hc:.3f}, events {se / he:.3f}, peak RSS {sr / hr:.3f}")
PY
      fi
      unset fig
    done
  done
fi
exit $failed
