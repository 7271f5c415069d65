#!/bin/sh
# Build and run the pfc/ micro-benchmark: ns per MMU admit/dequeue pair and per
# PFC frame decode. Usage: scripts/bench-pfc.sh [iterations]
# Uses its own build dir (optimized, no sanitizers) so it does not disturb others.
set -eu
. "$(dirname "$0")/lib/cli.sh"
cli_plain "$0" "$@"
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-pfc-bench}
if [ ! -d "$BUILD" ]; then
	meson setup "$BUILD" --buildtype=release >/dev/null
fi
# only the benchmark and the library it needs: the rest of the tree may be mid-edit
ninja -j2 -C "$BUILD" tests/pfc/bench_pfc >/dev/null
exec timeout 300 "$BUILD/tests/pfc/bench_pfc" "$@"
