#!/usr/bin/env bash
# The README's main job, on a fresh Debian 12 machine (as root):
#   1. install what rocelab needs (idempotent) and build it;
#   2. bring the default Clos (2 leaves x 2 spines x 4 hosts) up with real Linux
#      hosts in network namespaces (all inside a private network namespace),
#      ping across it, run iperf3 across the leaves, print the per-link table;
#   3. on the virtual clock, send 16 RoCE QPs with one UDP source port from h0
#      to h4 and show how 5-tuple ECMP and E-ECMP spread them over the spines;
#   4. experiment E1 in NCCL's model (quick: one seed; experiments/e1-nccl.yaml): ring
#      AllReduce over 8 emulated RDMA NICs, ECMP vs E-ECMP with QP scaling, the busbw
#      table (about 20 s with its pictures);
#   5. pictures of the fabric (tools/rocelab-viz) next to the tables: step 3's
#      uplinks side by side in results/demo/, E1's variants in results/e1-demo/pictures/.
#   scripts/demo.sh
set -euo pipefail
. "$(dirname "$0")/lib/cli.sh"
cli_plain "$0" "$@"
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "demo.sh: run as root (network namespaces, DPDK)" >&2; exit 2; }
bash scripts/install-deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build -j2 >/dev/null

bash scripts/fabric.sh demo

echo
echo "== 16 RoCE QPs h0 -> h4, one UDP source port (0xc0a5), virtual clock: leaf0's uplinks"
mkdir -p results/demo
for topo in default default-eecmp; do
  timeout 120 build/dataplane/rocelab-dp --topology "topologies/$topo.yaml" --clock virtual \
    --name "rl-demo-$$-$topo" --gen 'h0>h4:proto=roce,flows=16,sport=0xc0a5,rate=50G,count=16000' \
    --csv "results/demo/$topo.csv" --csv-interval 100us \
    2>/dev/null | tee "results/demo/$topo.txt" | awk -v t="$topo" '
      /^leaf0>spine[01] / { n[$1] = $3; tot += $3 }
      END { printf "  %-14s (%s): spine0 %5.1f%%  spine1 %5.1f%%\n", t,
            t == "default" ? "5-tuple ECMP" : "E-ECMP", 100 * n["leaf0>spine0"] / tot, 100 * n["leaf0>spine1"] / tot }'
done
rm -rf /var/run/dpdk/rl-demo-$$-*   # the DPDK runtime folders of those two runs
/usr/bin/python3 tools/rocelab-viz results/demo/default.csv results/demo/default-eecmp.csv \
  --label "5-tuple ECMP" --label "E-ECMP" --topology topologies/default.yaml \
  --report results/demo/default.txt --report results/demo/default-eecmp.txt \
  --title "16 RoCE QPs h0 -> h4, one UDP source port" --out results/demo/ecmp-vs-eecmp
echo "(picture: results/demo/ecmp-vs-eecmp.png, .svg; over time: results/demo/ecmp-vs-eecmp.html)"

echo
echo "== E1: E-ECMP + QP scaling, ring AllReduce over 8 emulated RDMA NICs, NCCL's model (virtual clock)"
/usr/bin/python3 scripts/experiment.py experiments/e1-nccl.yaml --quick \
  --out results/e1-demo 2>/dev/null | sed -n '/^| variant | [0-9]/,/^$/p;/^Largest/p'
echo "(plot and report: results/e1-demo/busbw.png, results/e1-demo/report.md;"
echo " the fabric of every variant: results/e1-demo/pictures/fabric.png, .html)"
