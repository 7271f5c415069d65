# SPDX-License-Identifier: BSD-3-Clause
# Shared by the live tests that run real hosts through scripts/fabric.sh. Source
# it first thing, from the test itself (usage: TEST ROCELAB_DP DATA_DIR, root):
# it re-runs the test inside a private network namespace of its own (nothing
# touches the machine's network), then sets DP, DATA, FAB, the TAP-like
# counters and ok/nok/check, and fx/tel for fabric $name (set name after
# sourcing), and all_pairs_ping (pingall.sh).
set -u
if [ "${ROCELAB_IN_NETNS:-}" != 1 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "$(basename "$0"): needs root"; echo "0 passed, 1 failed"; exit 1; }
  ROCELAB_IN_NETNS=1 exec timeout 600 unshare --net -- bash "$0" "$@"
fi
DP=$(realpath "$1") DATA=$(realpath "$2")
FAB="$(dirname "$0")/../../scripts/fabric.sh"
export ROCELAB_DP=$DP
ip link set lo up
pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "ok - $1"; }
nok() { fail=$((fail + 1)); echo "not ok - $1"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
fx() { bash "$FAB" exec "$name" "$@"; }
tel() { bash "$FAB" tel "$name" "$1"; }
. "$(dirname "${BASH_SOURCE[0]}")/pingall.sh"
