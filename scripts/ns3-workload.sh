# SPDX-License-Identifier: BSD-3-Clause
# The ns-3 comparison workload's traffic, shared by bench-nic.sh and
# bench-parts.sh (source it): on an 8 leaves x 16 hosts fabric, host (l, h)
# sends UDP at 100 Gbit/s line rate to host ((l + 1) mod 8, h), 1042-byte
# frames (14 Ethernet + 20 IPv4 + 8 UDP + 1000 payload), more than any run sends.
# ns3_gens: fills the array gens with the 128 --gen arguments, and ns3_pool
# with a packet pool that never runs dry under them (the leaves' uplinks are
# 2:1 oversubscribed, so their queues fill: about 400,000 frames at once; the
# default pool of 65,535 ran dry and held the senders back, which was no
# longer the workload; --mem for builds whose pool is in DPDK's memory).
#   source scripts/ns3-workload.sh   (run on its own, it only answers --help)
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  . "$(dirname "$0")/lib/cli.sh"
  cli_plain "$0" "$@"
  exit 0
fi
ns3_gens() {
  ns3_pool=(--mbufs 400000 --mem 3072)
  gens=()
  local l i
  for l in $(seq 0 7); do
    for i in $(seq 0 15); do
      gens+=(--gen "h$((l * 16 + i))>h$((((l + 1) % 8) * 16 + i)):proto=udp,size=1042,rate=100G,count=100000000")
    done
  done
}
