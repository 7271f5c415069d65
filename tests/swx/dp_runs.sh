# SPDX-License-Identifier: BSD-3-Clause
# Shared by the swx tests that run rocelab-dp: source it after setting DP (the
# program), SRC (the source root) and RUN_PREFIX (a name of the test's own).
# It sources tests/common/tap.sh and sets P4 (the shipped programs).
# shellcheck source=../common/tap.sh
source "$SRC/tests/common/tap.sh"
P4=$SRC/p4
n=0
dp() { # a virtual-clock run with a unique DPDK name and a timeout
  n=$((n + 1))
  timeout 120 "$DP" --clock virtual --name "$RUN_PREFIX$$-$n" "$@"
}
# Wall time differs between runs; everything else must not.
strip_wall() { sed 's/ in [0-9.]* s of wall time//; s/ ([0-9.]* M per wall second)//' "$1"; }
