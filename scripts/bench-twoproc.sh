#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Benchmark of one fabric over two rocelab-dp processes (--process K/N --peer,
# dataplane/io/dp_peer.h) against the same fabric in one process, measured in the
# same run: 64-byte frames h0 -> h4 through leaf-spine-leaf on net_null hosts
# (tests/bench/null-2x2.yaml: leaf0, spine0 in partition 0; leaf1, spine1 in 1),
# live clock, busy polling, DURATION each:
#   one      one process, one thread (--workers 1): the reference
#   threads  one process, two threads (--workers 2): the cut through rings
#   procs    two processes (--process 0/2, 1/2), the cut over a net_memif
# It prints frames delivered to h4 per second and each against the reference.
# --rsize N: the memif's ring, 2^N slots each way (default 12, as fabric.sh).
# Busy polling takes both cores of this machine for 3 x DURATION: run it alone.
# usage: scripts/bench-twoproc.sh [--build DIR] [--duration TIME] [--rsize N]   (root)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build DURATION=3s RSIZE=12
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --rsize) RSIZE=$2; shift 2 ;;
    -h|--help) sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-twoproc.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
DP=$BUILD/dataplane/rocelab-dp
[ -x "$DP" ] || { echo "bench-twoproc.sh: no $DP (meson setup $BUILD && ninja -C $BUILD)" >&2; exit 2; }
secs=$(python3 -c "import sys; s=sys.argv[1]; print(float(s[:-2]) / 1e3 if s.endswith('ms') else float(s.rstrip('s')))" "$DURATION")
TMP=$(mktemp -d /tmp/rl-btwoproc.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$TMP"' EXIT
common=(--topology tests/bench/null-2x2.yaml --clock live --busy-poll --duration "$DURATION" --flows 0)
gen=(--gen 'h0>h4:size=64,rate=100G,count=1000000000,flows=64')

# Mpps delivered to h4 in the host table of OUT.
mpps() { awk -v s="$secs" '$1 == "h4" && NF == 5 { printf "%.3f", $4 / s / 1e6 }' "$1"; }

echo "rocelab bench-twoproc: $(nproc) cores, $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%FT%TZ)"
for w in 1 2; do
  timeout 60 "$DP" "${common[@]}" "${gen[@]}" --workers "$w" --name "rl-btp-$$-w$w" > "$TMP/w$w.out" 2>&1 || true
done
sock="socket=$TMP/m.sock,socket-abstract=no,bsize=10240,rsize=$RSIZE"
timeout 60 "$DP" "${common[@]}" "${gen[@]}" --process 0/2 --peer "net_memif1,role=server,$sock" \
  --name "rl-btp-$$-p0" > "$TMP/p0.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$TMP/m.sock" ] && break; sleep 0.1; done
timeout 60 "$DP" "${common[@]}" --process 1/2 --peer "net_memif0,role=client,$sock" \
  --name "rl-btp-$$-p1" > "$TMP/p1.out" 2>&1 &
pids+=($!)
wait "${pids[@]}" || true
pids=()

one=$(mpps "$TMP/w1.out") thr=$(mpps "$TMP/w2.out") two=$(mpps "$TMP/p1.out")
ratio() { if [ -n "$1" ] && [ -n "$one" ]; then echo "$1 $one" | awk '$2 > 0 { printf "%.2fx", $1 / $2 }'; fi; }
printf '  one process, one thread:   %s Mpps delivered to h4 (reference)\n' "${one:-FAILED}"
printf '  one process, two threads:  %s Mpps, %s of the reference\n' "${thr:-FAILED}" "$(ratio "$thr")"
printf '  two processes over memif:  %s Mpps, %s of the reference\n' "${two:-FAILED}" "$(ratio "$two")"
awk '$2 ~ /^net_memif/ && NF == 10 { printf "  peer port of process %s: rx %s tx %s held %s, port full %s times, drops %d\n", FILENAME ~ /p0/ ? 0 : 1, $3, $4, $5, $6, $7 + $8 + $9 + $10 }' "$TMP/p0.out" "$TMP/p1.out"
grep -h 'ran dry' "$TMP"/*.out | sed 's/^rocelab-dp: /  /' || true
