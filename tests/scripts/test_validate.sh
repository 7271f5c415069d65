#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 40, item 4: the validation against published nccl-tests runs.
# - The tables between the markers of experiments/validation/README.md and README.md
#   are what scripts/validate.py writes from the committed figures (--check).
# - The smallest case (2 ranks) reproduces its committed figures exactly at two sizes:
#   the virtual clock is deterministic (--reproduce; needs rocelab-dp).
# - Both checks fail when they should, on a copy of the files: a changed figure makes
#   the tables stale and differs from the run; a hand-edited table is stale.
# - Bad input exits 2 with one line naming it: an unknown case, a case file without a
#   key, a size the figures do not have.
# usage: test_validate.sh SOURCE_ROOT [ROCELAB_DP]
set -u
root=$(realpath "$1") dp=${2:-}
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"
export PYTHONDONTWRITEBYTECODE=1
PY=/usr/bin/python3
CASE=gb10-2x1-roce SIZES=8192,65536

rc=0; $PY "$root/scripts/validate.py" --check > "$tmp/out" 2>&1 || rc=$?
check "the committed README tables are what validate.py writes from the figures (rc $rc)" "[ $rc -eq 0 ]"
sed 's/^/# /' "$tmp/out" | head -5

# a copy of what the script reads: its checks are tried on it, never on the tree
copy=$tmp/root
mkdir -p "$copy/tools" "$copy/experiments"
cp -r "$root/scripts" "$copy/scripts"
cp -r "$root/tools/rocelab-viz-lib" "$copy/tools/"
cp -r "$root/experiments/validation" "$copy/experiments/"
cp "$root/README.md" "$copy/README.md"
rc=0; $PY "$copy/scripts/validate.py" --check > /dev/null 2>&1 || rc=$?
check "the copy passes --check as the tree does (rc $rc)" "[ $rc -eq 0 ]"

# a figure changed by hand: 23.52 us becomes 29.52 us at 8 KiB (the tables show 23.52)
ours=$copy/experiments/validation/$CASE.ours.csv
cp "$ours" "$tmp/ours.orig"
sed -i 's/^8192,23.52,/8192,29.52,/' "$ours"
check "the edit took" "! cmp -s '$ours' '$tmp/ours.orig'"
rc=0; $PY "$copy/scripts/validate.py" --check > "$tmp/out" 2>&1 || rc=$?
check "a changed figure makes the tables stale: exit 1 ($rc), both READMEs named" \
  "[ $rc -eq 1 ] && grep -q 'experiments/validation/README.md' '$tmp/out' && grep -q '^README.md' '$tmp/out'"

# a hand-edited table (the figure as committed again)
cp "$tmp/ours.orig" "$ours"
sed -i 's/| 8K | 23.52 |/| 8K | 23.50 |/' "$copy/experiments/validation/README.md"
rc=0; $PY "$copy/scripts/validate.py" --check > "$tmp/out" 2>&1 || rc=$?
check "a hand-edited table is stale: exit 1 ($rc)" "[ $rc -eq 1 ]"
cp "$root/experiments/validation/README.md" "$copy/experiments/validation/README.md"

if [ -n "$dp" ]; then
  before=$(ls /var/run/dpdk 2> /dev/null | grep -c '^val') || true
  rc=0; timeout 120 $PY "$root/scripts/validate.py" --reproduce --case $CASE --sizes $SIZES --dp "$dp" \
    > "$tmp/out" 2>&1 || rc=$?
  check "$CASE reproduces its committed figures at $SIZES (rc $rc)" \
    "[ $rc -eq 0 ] && grep -q '^$CASE: reproduced at $SIZES' '$tmp/out'"
  sed 's/^/# /' "$tmp/out" | head -5
  sed -i 's/^65536,28.59,2.29,/65536,28.60,2.28,/' "$ours"
  rc=0; timeout 120 $PY "$copy/scripts/validate.py" --reproduce --case $CASE --sizes $SIZES --dp "$dp" \
    > "$tmp/out" 2>&1 || rc=$?
  check "a committed figure the run does not give: exit 1 ($rc), the size named" \
    "[ $rc -eq 1 ] && grep -q 'size 65536: committed' '$tmp/out' && ! grep -q 'size 8192' '$tmp/out'"
  cp "$tmp/ours.orig" "$ours"
  after=$(ls /var/run/dpdk 2> /dev/null | grep -c '^val') || true
  check "the runs left no DPDK runtime directory ($before before, $after after)" "[ '$before' = '$after' ]"
else
  echo "# no rocelab-dp given: the reproduction is not run"
fi

# bad input: exit 2, one line on stderr naming it, nothing written
bad() { # NAME EXPECTED-TEXT ARGS...
  local name=$1 want=$2 rc=0
  shift 2
  $PY "$copy/scripts/validate.py" "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  check "$name: exit 2 ($rc), one line naming it" \
    "[ $rc -eq 2 ] && [ \$(wc -l < '$tmp/err') -eq 1 ] && grep -q -- \"$want\" '$tmp/err'"
  sed 's/^/# /' "$tmp/err" | head -3
}
bad "an unknown case" "unknown case 'gb10-2x1-rocee' (did you mean gb10-2x1-roce?)" --run --case gb10-2x1-rocee
bad "--reproduce of a size the figures lack" "12345 is not a size of" \
  --reproduce --case $CASE --sizes 12345 --dp /bin/false
real=$copy/experiments/validation/$CASE.real.yaml
cp "$real" "$tmp/real.orig"
sed -i 's/^  pcie_rate: null/  pcie_rate: fast/' "$real"
bad "a case's bad model.pcie_rate" "$CASE.real.yaml: model.pcie_rate: rate 'fast' is not" --check
cp "$tmp/real.orig" "$real"
sed -i '/^op: allreduce/d' "$real"
bad "a case file without op" "$CASE.real.yaml: key 'op' is missing" --check
tap_done
