#!/usr/bin/env bash
# Benchmark hashing/: ns per packet for parse + hash + next-hop per profile and
# algorithm, with DPDK's rte_hash_crc and rte_jhash on the same keys as reference.
#   scripts/bench-hashing.sh [PACKETS_PER_ROUND] [ROUNDS]
set -euo pipefail
. "$(dirname "$0")/lib/cli.sh"
cli_plain "$0" "$@"
cd "$(dirname "$0")/.."
[ -f build-bench/build.ninja ] || meson setup build-bench --buildtype=release >/dev/null
ninja -C build-bench -j2 tests/bench/bench_hashing >/dev/null
exec build-bench/tests/bench/bench_hashing "${1:-4096}" "${2:-200}"
