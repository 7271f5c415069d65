#!/usr/bin/env bash
# Soak: rocelab-dp live for MINUTES (default 10) on tests/bench/soak-2x2.yaml
# (net_null hosts, 1 Gbit/s host links) with in-process traffic: a 2:1 PFC incast
# on lossless priority 3 under leaf0 (h0, h1 -> h2) and two lossy streams across the
# spines, one each way (h3 -> h5 UDP, h6 -> h3 RoCE),
# while a leaf-spine link is taken down and up through telemetry every FLAP
# seconds (alternating spines). Every SAMPLE seconds it records the process's RSS,
# the mbufs in use (DPDK telemetry /mempool/info), the lag behind real time and the
# drops; at the end it prints a summary: RSS start/max/end, mbufs in use max/end,
# drops (lossless ones apart), lag max/end, the generators' achieved rates.
#
#   scripts/soak.sh [MINUTES]     SAMPLE=5 FLAP=20 scripts/soak.sh 1
#   SOAK_SECONDS=30 scripts/soak.sh   (a short try: seconds instead of minutes)
# Exit status: rocelab-dp's. Needs root (DPDK). Leaves nothing behind.
set -euo pipefail
. "$(dirname "$0")/lib/cli.sh"
cli_plain "$0" "$@"
cd "$(dirname "$0")/.."
mins=${1:-10}
secs=${SOAK_SECONDS:-$((mins * 60))}
SAMPLE=${SAMPLE:-5} FLAP=${FLAP:-20}
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build -j2 dataplane/rocelab-dp >/dev/null
DP=build/dataplane/rocelab-dp
name=soak$$                      # DPDK prefix rocelab-soakPID (scripts/fabric.sh tel reaches it)
log=$(mktemp /tmp/rl-soak-log.XXXXXX) samples=$(mktemp /tmp/rl-soak-samples.XXXXXX)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; fi
  rm -f "$log" "$samples"
}
trap cleanup EXIT
tel() { bash scripts/fabric.sh tel "$name" "$1" 2>/dev/null || true; }
jget() { python3 -c "import json,sys; d=json.load(sys.stdin); d=list(d.values())[0]; print(eval(sys.argv[1]))" "$1" 2>/dev/null || true; }

"$DP" --topology tests/bench/soak-2x2.yaml --clock live --duration "${secs}s" \
  --name "rocelab-$name" --flows 4096 \
  --gen 'h0>h2:dscp=26,rate=1G,size=1000,count=1000000000000' \
  --gen 'h1>h2:dscp=26,rate=1G,size=1000,count=1000000000000' \
  --gen 'h3>h5:rate=800M,size=1500,flows=16,count=1000000000000' \
  --gen 'h6>h3:proto=roce,sport=vary,rate=800M,size=1078,flows=16,count=1000000000000' \
  > "$log" 2>&1 &
pid=$!
# up when /rocelab/info answers (the socket comes with EAL, our commands a little later)
for _ in $(seq 100); do [ -n "$(tel /rocelab/info | jget 'd["mbufs_in_use"]')" ] && break; sleep 0.1; done
echo "soak: rocelab-dp PID $pid, $secs s, sample every $SAMPLE s, link flap every $FLAP s"
printf '%8s %9s %12s %9s %14s\n' t_s rss_MiB mbufs_in_use lag_ms drops/lossless
t0=$(date +%s) flaps=0 next_flap=$FLAP down=""
while kill -0 "$pid" 2>/dev/null; do
  t=$(( $(date +%s) - t0 ))
  rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
  info=$(tel /rocelab/info)
  inuse=$(echo "$info" | jget 'd["mbufs_in_use"]')
  lag=$(echo "$info" | jget 'round(d["lag_ns"] / 1e6, 3)')
  # all drops of switches and links; lossless ones (buffer_headroom) apart
  drops=$(tel /rocelab/drops | jget '"%d/%d" % (sum(sum(v) for k, v in d.items() if k != "columns"), sum(v[d["columns"].index("buffer_headroom")] for k, v in d.items() if k != "columns"))')
  [ -n "$inuse" ] && printf '%8s %9s %12s %9s %14s\n' "$t" "$((rss / 1024))" "$inuse" "${lag:-?}" "${drops:-?}" | tee -a "$samples"
  if [ "$t" -ge "$next_flap" ]; then
    if [ -z "$down" ]; then
      down="leaf0-spine$((flaps % 2))"; tel "/rocelab/link_set,$down,down" > /dev/null && flaps=$((flaps + 1))
      next_flap=$((t + 2))          # down for about 2 s
    else
      tel "/rocelab/link_set,$down,up" > /dev/null; down=""; next_flap=$((t + FLAP))
    fi
  fi
  sleep "$SAMPLE"
done
rc=0; wait "$pid" || rc=$?; pid=""
echo
echo "== rocelab-dp's report"
grep -E '^rocelab-dp: (ran|lag|stopped)|^generator ' "$log" || true
echo "== link table (leaf-spine, drops)"
awk '$1 ~ /^(leaf|spine)[0-9]>(leaf|spine)[0-9]$/ || $1 ~ /^leaf0>h2$/ || $1 ~ /^h[01]>leaf0$/' "$log" | head -12
echo "== switches"
awk '/^switch +role/,/^$/' "$log"
echo "== summary ($secs s, $flaps link flaps, exit $rc)"
python3 - "$samples" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
if not rows:
    print("no samples"); sys.exit()
rss = [int(r[1]) for r in rows]; mb = [int(r[2]) for r in rows]
lag = [float(r[3]) for r in rows if r[3] != '?']; dr = [r[4] for r in rows]
print("RSS MiB: start %d, max %d, end %d" % (rss[0], max(rss), rss[-1]))
print("mbufs in use: start %d, max %d, end %d" % (mb[0], max(mb), mb[-1]))
if lag:
    print("lag ms (sampled): max %.3f, end %.3f" % (max(lag), lag[-1]))
print("drops (all / lossless priority, telemetry): end %s" % dr[-1])
PY
exit "$rc"
