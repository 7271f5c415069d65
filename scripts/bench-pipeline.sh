#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Benchmark of a switch's forwarding decision as a DPDK SWX program
# (rocelab-dp --pipeline p4/ecmp.spec, dataplane/fabric/dp_swx.h) beside the
# C pipeline, in one run on one build. The workload is the virtual clock's
# path of scripts/bench-dataplane.sh: topologies/default.yaml, 64-byte UDP
# frames h0 -> h4 over 64 flows, through leaf0, a spine and leaf1. Each of
# ROUNDS rounds runs the C pipeline, then the program. Figure: switch
# forwards per wall second of the run loop (the 'ran' line; set-up
# excluded), the medians and their ratio (program / C), and the median of
# each round's ratio (the figure the machine's drift moves least). The two
# outputs must be the same, wall-time figures aside; the script says whether
# they are.
#
#   scripts/bench-pipeline.sh [PACKETS] [ROUNDS]   (default 300000 packets, 3 rounds)
set -euo pipefail
. "$(dirname "$0")/lib/cli.sh"
cli_plain "$0" "$@"
cd "$(dirname "$0")/.."
n=${1:-300000}
rounds=${2:-3}
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build -j2 >/dev/null
DP=build/dataplane/rocelab-dp
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one NAME ROUND [ARGS...]: a run; prints its switch forwards per wall second
one() {
  local name=$1 r=$2; shift 2
  timeout 600 "$DP" --topology topologies/default.yaml --clock virtual --name "rl-bp-$$-$name$r" \
    --gen "h0>h4:size=64,rate=100G,count=$n,flows=64" "$@" > "$tmp/$name$r.txt" 2> /dev/null
  sed -n 's/.* switch forwards (\([0-9.]*\) M per wall second).*/\1/p' "$tmp/$name$r.txt"
}
strip_wall() { sed 's/ in [0-9.]* s of wall time//; s/ ([0-9.]* M per wall second)//' "$1"; }

echo "== $n x 64 B packets h0 -> h4 (3 switches), virtual clock, $rounds rounds: C pipeline, then p4/ecmp.spec"
c=() p=()
for r in $(seq "$rounds"); do
  c+=("$(one c "$r")")
  p+=("$(one p "$r" --pipeline p4/ecmp.spec)")
  echo "round $r: C ${c[-1]:-?}, spec ${p[-1]:-?} M switch forwards per wall second"
  if [ -z "${c[-1]}" ] || [ -z "${p[-1]}" ]; then
    echo "bench-pipeline.sh: a run of round $r failed (its output: $tmp, removed at exit)" >&2
    exit 1
  fi
done
if cmp -s <(strip_wall "$tmp/c1.txt") <(strip_wall "$tmp/p1.txt"); then
  echo "outputs: identical (wall time aside)"
else
  echo "outputs: DIFFER"
fi
python3 - "${#c[@]}" "${c[@]}" "${p[@]}" <<'PY'
import statistics, sys
k = int(sys.argv[1]); c = [float(x) for x in sys.argv[2:2 + k]]; p = [float(x) for x in sys.argv[2 + k:]]
mc, mp = statistics.median(c), statistics.median(p)
print(f"C pipeline: {mc:.3f} M switch forwards per wall second (median; {min(c):.3f}-{max(c):.3f})")
print(f"p4/ecmp.spec: {mp:.3f} M switch forwards per wall second (median; {min(p):.3f}-{max(p):.3f})")
print(f"ratio spec / C: {mp / mc:.3f} (of the medians)" if mc > 0 else "ratio spec / C: no C figure")
# a round's two runs are minutes apart at most: their ratio resists the machine's drift
rr = [b / a for a, b in zip(c, p) if a > 0]
if rr:
    print(f"ratio spec / C per round: median {statistics.median(rr):.3f} ({min(rr):.3f}-{max(rr):.3f})")
PY
