# SPDX-License-Identifier: BSD-3-Clause
# Shared by the shell tests: a private temporary directory ($tmp, removed at
# exit) and TAP-like result lines. Source it; end the test with tap_done.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "ok - $1"; }
nok() { fail=$((fail + 1)); echo "not ok - $1"; }
# check NAME SHELL-CONDITION
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
# dpdk_left NAME...: how many DPDK runtime directories the runs named NAME left behind.
dpdk_left() {
  local left=0 n d
  for n in "$@"; do
    for d in "/var/run/dpdk/$n" "/var/run/dpdk/$n"-r*; do [ -e "$d" ] && left=$((left + 1)); done
  done
  echo "$left"
}
# The summary line; the exit status is 1 when anything failed.
tap_done() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; }
