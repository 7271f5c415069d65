#!/usr/bin/env bash
# The README's test command: install what is missing, build, then run every
# test twice (plain build and under AddressSanitizer + UndefinedBehaviorSanitizer),
# the partitions on threads under ThreadSanitizer, then the parser fuzzer for a
# bounded time. Fails loudly on the first failure.
# Needs root (apt, network namespaces, DPDK).
#
#   scripts/test.sh            everything
#   FUZZ_SECONDS=0 scripts/test.sh   skip the fuzzer
#   SUITES="hashing pfc" scripts/test.sh   only these meson suites
set -euo pipefail
. "$(dirname "$0")/lib/cli.sh"
cli_plain "$0" "$@"
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh   # idempotent: nothing to do when all is there

FUZZ_SECONDS=${FUZZ_SECONDS:-30}
# Leftover check: a baseline now, a comparison after everything (other runs on this
# machine may come and go meanwhile: only rocelab names and this run's processes count).
ROCELAB_SUITE_RUN="$$-$(date +%s%N)"
export ROCELAB_SUITE_RUN
leftover_base=$(mktemp /tmp/rl-leftover-base.XXXXXX)
trap 'rm -f "$leftover_base"' EXIT
bash tests/dataplane/test_leftovers_suite.sh baseline "$leftover_base"
suite_args=()
for s in ${SUITES:-}; do suite_args+=(--suite "$s"); done

total_ok=0 total_fail=0
run_dir() { # build dir, extra meson test args (one string), meson setup args...
  local dir=$1 extra=$2; shift 2
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$@" >/dev/null
  fi
  echo "== build $dir"
  ninja -C "$dir" -j2 >/dev/null || { ninja -C "$dir" -j1; exit 1; }
  echo "== test $dir"
  local log rc=0
  log=$(mktemp)
  # shellcheck disable=SC2086  # $extra holds several arguments
  meson test -C "$dir" -v --num-processes 2 --print-errorlogs "${suite_args[@]}" $extra 2>&1 | tee "$log" || rc=$?
  local ok fail
  ok=$(awk '/^Ok:/ {print $2}' "$log"); fail=$(awk '/^Fail:/ {print $2}' "$log")
  total_ok=$((total_ok + ${ok:-0})); total_fail=$((total_fail + ${fail:-0}))
  rm -f "$log"
  if [ $rc -ne 0 ]; then
    echo "test.sh: tests failed in $dir" >&2
    echo "tests: $total_ok passed, $((total_fail > 0 ? total_fail : 1)) failed"
    exit 1
  fi
}

# --prefix=/usr: the .deb test (suite deb) packages this build instead of building another
run_dir build "" --prefix=/usr
# Under the sanitizers: everything of ours; the Mininet and soft-RoCE VM suites drive
# external programs (mn, qemu) for minutes and gain nothing from it, so they run once.
if [ -z "${SUITES:-}" ]; then asan_extra="--no-suite mininet --no-suite rxe"; else asan_extra=""; fi
run_dir build-asan "$asan_extra" -Db_sanitize=address,undefined -Db_lundef=false
# Under ThreadSanitizer: the partitions on threads (suite threads, only in that build).
if [ -z "${SUITES:-}" ] || [[ " $SUITES " == *" threads "* ]]; then
  run_dir build-tsan "--suite threads" -Db_sanitize=thread -Db_lundef=false
fi

if [ "$FUZZ_SECONDS" -gt 0 ]; then
  echo "== fuzz ($FUZZ_SECONDS s)"
  if bash scripts/fuzz.sh "$FUZZ_SECONDS"; then total_ok=$((total_ok + 1))
  else total_fail=$((total_fail + 1)); echo "tests: $total_ok passed, $total_fail failed"; exit 1; fi
fi
echo "== leftovers"
if bash tests/dataplane/test_leftovers_suite.sh check "$leftover_base"; then total_ok=$((total_ok + 1))
else total_fail=$((total_fail + 1)); fi
echo "tests: $total_ok passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
