#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A GPU's NIC sends at most at its server's PCIe rate (servers.pcie_rate,
# topo_host_nic_rate_bps): two servers of one GPU each, 200G links, a 16 MiB
# AllReduce on the virtual clock. With the default PCIe Gen5 x16 (63.02 GB/s)
# the NIC (25 GB/s) binds; with pcie_rate: 100G (12.5 GB/s) the busbw stays
# under 12.5 GB/s. Bad pcie_rate values exit 2 with FILE:LINE and the value.
# usage: test_pcie_dp.sh ROCELAB_DP
set -u
DP=$1
. "$(dirname "$0")/../common/tap.sh"
trap 'rm -rf "$tmp" /var/run/dpdk/rl-pcie$$-*' EXIT  # and DPDK's runtime folders of our runs

n=0
topo() { # topo PCIE-KEYS: the two-server topology into $tmp/t.yaml
  cat > "$tmp/t.yaml" <<YAML
name: pcie2
defaults:
  host: {attach: emulated, mtu: 4200}
  link: {rate: 200G}
servers: {gpus_per_server: 1$1}
switches:
  - {name: leaf0, role: rtsw}
hosts:
  - {name: h0, leaf: leaf0, server: s0, gpu: 0}
  - {name: h1, leaf: leaf0, server: s1, gpu: 0}
YAML
}
run() { # run PCIE-KEYS: rc, the exit status, and b, the busbw of the result line
  topo "$1"
  n=$((n + 1))
  timeout 300 "$DP" --topology "$tmp/t.yaml" --clock virtual --flows 0 --name "rl-pcie$$-$n" \
    --coll op=allreduce,sizes=16M,data=off > "$tmp/out.txt" 2> "$tmp/err.txt"
  rc=$?
  b=$(awk '$1 == 16777216 { print $8 }' "$tmp/out.txt")
  b=${b:-0}
}

run ""
check "default PCIe (63.02 GB/s) above the 200G NIC: exit 0 ($rc), busbw $b in 20..25 GB/s" \
  "[ $rc -eq 0 ] && awk 'BEGIN { exit !($b > 20 && $b <= 25) }'"
run ", pcie_rate: 100G"
check "pcie_rate: 100G below the 200G NIC: exit 0 ($rc), busbw $b in 10..12.5 GB/s" \
  "[ $rc -eq 0 ] && awk 'BEGIN { exit !($b > 10 && $b <= 12.5) }'"
run ", pcie_rate: 400G"
check "pcie_rate: 400G above the NIC: busbw $b as with the default" \
  "[ $rc -eq 0 ] && awk 'BEGIN { exit !($b > 20 && $b <= 25) }'"

for v in 0 -5G fast 0.5; do
  run ", pcie_rate: $v"
  check "pcie_rate: $v refused: exit 2 ($rc), t.yaml:5 and the value: $(head -1 "$tmp/err.txt")" \
    "[ $rc -eq 2 ] && grep -q 't.yaml:5: pcie_rate: ' '$tmp/err.txt' && { [ '$v' = 0 ] || grep -qF \"'$v'\" '$tmp/err.txt'; }"
done
tap_done
