#!/usr/bin/env bash
# Benchmark rocelab-dp against dpdk-testpmd, in one run (root; about 2 minutes).
#
#  1. testpmd io forwarding between two net_null ports, no hugepages: the
#     per-core ceiling any DPDK pipeline is measured against (Rx-pps, median
#     of its per-second readings).
#  2. rocelab-dp, live clock, busy-polling one core, on tests/bench/null-2x2.yaml:
#     the default 2x2 Clos with every host a net_null DPDK port, all features
#     on (parse, LPM route, 5-tuple CRC-32 ECMP, MMU admission with PFC/ECN,
#     8 queues SP+DWRR, 100G links with 1 us delay, per-flow path table).
#     64-byte UDP packets h0 -> h4 from the in-process generator (it allocates
#     and writes every packet, counted in the time) cross leaf0, a spine and
#     leaf1 and leave through h4's net_null port (which frees them, as
#     testpmd's does). Figure: packets out of h4 per second, median of RUNS.
#  3. The same path on the virtual clock (the discrete-event mode experiments
#     use): packets per wall-clock second.
#  4. Instructions per packet of 2 (valgrind's callgrind, when installed):
#     a figure the machine's noise does not move.
#  5. resident memory of rocelab-dp running the default topology live with
#     its 8 veth hosts.
#  6. AF_XDP forwarding between two namespaces: rocelab-dp vs testpmd.
#
#   scripts/bench-dataplane.sh [PACKETS] [RUNS]   (virtual-clock packets, default 2000000; runs, default 5)
set -euo pipefail
. "$(dirname "$0")/lib/cli.sh"
cli_plain "$0" "$@"
cd "$(dirname "$0")/.."
n=${1:-2000000}
runs=${2:-5}
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build -j2 >/dev/null
DP=build/dataplane/rocelab-dp
GEN='h0>h4:size=64,rate=100G,count=1000000000,flows=64'
# dpdk-testpmd keeps its DPDK runtime directory (/var/run/dpdk/PREFIX, ~6 MB) after
# it exits: remove ours (unique prefixes rl-tp-$$, rl-tpx-$$) whatever way we leave.
testpmd_dirs_rm() { rm -rf "/var/run/dpdk/rl-tp-$$" "/var/run/dpdk/rl-tpx-$$"; }
trap testpmd_dirs_rm EXIT

echo "== dpdk-testpmd io forwarding, 2 x net_null, no hugepages (1 forwarding core)"
tp=$( (timeout -s INT 8 dpdk-testpmd --no-huge -m 512 --no-pci --file-prefix "rl-tp-$$" \
        -l 0,1 --vdev net_null0 --vdev net_null1 --log-level='*:warning' -- \
        --forward-mode=io --auto-start --no-lsc-interrupt --total-num-mbufs=16384 --stats-period 1 < /dev/null 2>&1 || true) \
      | python3 -c '
import re, sys, statistics
rates = []; cur = 0; seen = 0
for line in sys.stdin:
    m = re.search(r"Rx-pps:\s+(\d+)", line)
    if m:
        cur += int(m.group(1)); seen += 1
        if seen == 2:               # two ports per reading
            if cur: rates.append(cur)
            cur = seen = 0
print(statistics.median(rates[1:]) / 1e6 if len(rates) > 2 else 0)')
testpmd_dirs_rm
echo "testpmd: ${tp} Mpps"

echo "== rocelab-dp, live clock, busy poll, net_null hosts, 64 B h0 -> h4 through 3 switches, $runs runs of 2 s"
rates=()
for i in $(seq "$runs"); do
  r=$(timeout 60 "$DP" --topology tests/bench/null-2x2.yaml --clock live --busy-poll --duration 2s \
        --name "rl-bn-$$-$i" --gen "$GEN" 2>/dev/null | awk '$1 == "h4" && NF == 5 { printf "%.3f", $4 / 2e6 }')
  rates+=("${r:-0}")
done
echo "runs (Mpps): ${rates[*]}"
python3 - "$tp" "${rates[@]}" <<'PY'
import statistics, sys
tp = float(sys.argv[1]); r = [float(x) for x in sys.argv[2:]]
med = statistics.median(r)
print(f"rocelab-dp live: {med:.3f} Mpps end to end (median; {min(r):.3f}-{max(r):.3f}), "
      f"{3 * med:.3f} M switch forwards/s")
if tp > 0:
    print(f"ratio to testpmd io forwarding: {med / tp:.3f} end to end (target 0.3), {3 * med / tp:.3f} per switch hop")
PY

echo "== rocelab-dp, virtual clock, default topology, $n x 64 B packets h0 -> h4 (3 switches)"
out=$(timeout 600 "$DP" --topology topologies/default.yaml --clock virtual --name "rl-bench-$$" \
        --gen "h0>h4:size=64,rate=100G,count=$n,flows=64" 2>/dev/null)
echo "$out" | grep '^rocelab-dp: ran'
wall=$(echo "$out" | sed -n 's/.* in \([0-9.]*\) s of wall time.*/\1/p')
rx=$(echo "$out" | awk '$1 == "h4" && NF == 5 { print $4 }')
python3 - "$rx" "$wall" <<'PY'
import sys
rx, wall = int(sys.argv[1]), float(sys.argv[2])
print(f"rocelab-dp virtual: {rx} packets delivered in {wall:.3f} s = {rx / wall / 1e6:.3f} Mpps end to end")
PY

if command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null; then
  echo "== instructions per packet (callgrind; live run of 2 on net_null, 3 s under valgrind)"
  cg=$(mktemp)
  res=$(timeout 120 valgrind --tool=callgrind --callgrind-out-file="$cg" \
        --toggle-collect=dp_engine_run_due --toggle-collect=dp_port_poll --toggle-collect=dp_port_flush \
        "$DP" --topology tests/bench/null-2x2.yaml --clock live --busy-poll --duration 3s \
        --name "rl-bcg-$$" --gen "$GEN" 2>&1 || true)
  pk=$(echo "$res" | awk '$1 == "h4" && NF == 5 { print $4 }')
  ir=$(echo "$res" | awk '/Collected :/ { print $4 }')
  if [ -n "$pk" ] && [ "${pk:-0}" -gt 0 ] && [ -n "$ir" ]; then
    echo "rocelab-dp: $((ir / pk)) instructions per packet end to end (generator, 3 switches, sink)"
    echo "  per packet  where (the ten largest)"
    callgrind_annotate --show-percs=no "$cg" 2>/dev/null | sed -n '/file:function/,$p' | sed -n '3,12p' | \
      awk -v pk="$pk" '{ v = $1; gsub(",", "", v); sub(/ \[.*/, "", $2); sub(/^.*\.\.\//, "", $2);
                         printf "  %10d  %s\n", v / pk, $2 }'
  else
    echo "callgrind run failed"
  fi
  rm -f "$cg"
fi

echo "== resident memory, default topology, live, 8 veth hosts"
rss=$(unshare --net -- bash -c '
  ip link set lo up
  bash scripts/fabric.sh up rss$$ --topology topologies/default.yaml --timeout 60 >/dev/null
  pid=$(pgrep -P "$(cat /tmp/rocelab-rss$$/dp.pid)" -x rocelab-dp)  # dp.pid is its timeout wrapper
  sleep 1
  awk "/VmRSS/ { print \$2 }" /proc/$pid/status
  bash scripts/fabric.sh down rss$$ >/dev/null')
echo "rocelab-dp VmRSS: $((rss / 1024)) MiB (no hugepages; target at most 512)"

echo "== AF_XDP: iperf3 TCP between two namespace hosts, through rocelab-dp (one leaf) vs through"
echo "   dpdk-testpmd io forwarding on the same kind of ports (af_xdp on veths), 4 s each"
unshare --net -- bash -c '
  set -u
  ip link set lo up
  rate() { python3 -c "import json,sys; print(round(json.load(sys.stdin)[\"end\"][\"sum_received\"][\"bits_per_second\"]/1e6))"; }
  # rocelab-dp: h0 -> h1 under leaf0
  bash scripts/fabric.sh up bx$$ --topology topologies/default.yaml --veth af_xdp --timeout 60 >/dev/null 2>&1
  bash scripts/fabric.sh exec bx$$ h0 ping -c 1 -W 2 -q 10.0.0.2 >/dev/null
  bash scripts/fabric.sh exec bx$$ h1 timeout 20 iperf3 -s -1 -D --logfile /dev/null; sleep 0.3
  a=$(bash scripts/fabric.sh exec bx$$ h0 timeout 20 iperf3 -c 10.0.0.2 -t 4 -O 1 -J | rate)
  bash scripts/fabric.sh down bx$$ >/dev/null 2>&1
  # testpmd: two hosts on veths, io forwarding between their af_xdp ports
  pids=()
  for i in 0 1; do
    unshare --net sleep 120 & p=$!; pids+=($p); disown $p; sleep 0.2
    ip link add rl-t$i type veth peer name eth0 netns $p
    ip link set rl-t$i up
    ethtool -K rl-t$i tx off tso off gso off gro off rx off >/dev/null 2>&1
    nsenter -t $p -n sh -c "ip link set lo up; ip addr add 10.9.0.$((i + 1))/24 dev eth0; ip link set eth0 up;
      ethtool -K eth0 tx off tso off gso off gro off rx off >/dev/null 2>&1"
  done
  (sleep 20; echo) | timeout 30 dpdk-testpmd --no-huge -m 512 --no-pci --file-prefix rl-tpx-$PPID -l 0,1 \
    --vdev net_af_xdp0,iface=rl-t0 --vdev net_af_xdp1,iface=rl-t1 --log-level="*:error" -- \
    --forward-mode=io --auto-start --total-num-mbufs=16384 >/dev/null 2>&1 &
  tp=$!
  sleep 3
  nsenter -t ${pids[0]} -n ping -c 1 -W 2 -q 10.9.0.2 >/dev/null
  nsenter -t ${pids[1]} -n timeout 20 iperf3 -s -1 -D --logfile /dev/null; sleep 0.3
  b=$(nsenter -t ${pids[0]} -n timeout 20 iperf3 -c 10.9.0.2 -t 4 -O 1 -J | rate)
  kill $tp 2>/dev/null; wait $tp 2>/dev/null
  kill "${pids[@]}" 2>/dev/null
  echo "rocelab-dp (af_xdp, one switch): ${a:-?} Mbit/s; testpmd io (af_xdp): ${b:-?} Mbit/s"
  [ -n "$a" ] && [ -n "$b" ] && python3 -c "print(\"ratio to testpmd: %.2f (target 0.9)\" % ($a / $b))"
' 2>&1 | grep -v "libbpf\|libxdp"
