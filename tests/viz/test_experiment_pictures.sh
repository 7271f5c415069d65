#!/usr/bin/env bash
# scripts/experiment.py draws the fabric of every variant next to its tables
# (E1 smoke size): pictures/fabric.{png,svg,html} exist, the report shows the
# PNG, the SVG has one panel per variant; and sampling the links for the
# pictures (--csv) leaves the results unchanged (same results.csv and
# totals.csv as a run with --no-pictures: the virtual clock stays deterministic).
# usage: test_experiment_pictures.sh ROCELAB_DP EXPERIMENTS_DIR
set -u
DP=$(realpath "$1") EXP=$(realpath "$2")
RUNNER="$(dirname "$0")/../../scripts/experiment.py"
tmp=$(mktemp -d /tmp/rlviz-exp-XXXXXX)
pids=()
# experiment.py names its runs rl-exp-PID-N; DPDK leaves their runtime folders
trap 'rm -rf "$tmp"; for p in "${pids[@]}"; do rm -rf /var/run/dpdk/rl-exp-$p-*; done' EXIT
run() { # ARGS...: the runner, in the background so its PID is known (meson's timeout bounds it)
  /usr/bin/python3 "$RUNNER" "$e1" --smoke --dp "$DP" "$@" &
  pids+=($!)
  wait $!
}
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); echo "ok - $1"; else fail=$((fail + 1)); echo "not ok - $1"; fi; }

e1=$EXP/e1-eecmp-qp-scaling.yaml
run --out "$tmp/with" > "$tmp/with.out" 2> "$tmp/with.err"
check "experiment with pictures: exit 0" "[ $? -eq 0 ]"
run --out "$tmp/without" --no-pictures > /dev/null 2>&1
check "experiment --no-pictures: exit 0, no pictures/" "[ $? -eq 0 ] && [ ! -e $tmp/without/pictures ]"
for f in fabric.png fabric.svg fabric.html; do
  check "pictures/$f written" "[ -s $tmp/with/pictures/$f ]"
done
check "report.md shows the fabric picture" "grep -q '](pictures/fabric.png)' $tmp/with/report.md"
n=$(/usr/bin/python3 -c "
import sys, xml.etree.ElementTree as ET
runs = {g.get('data-run').split(':')[0] for g in ET.parse(sys.argv[1]).iter('{http://www.w3.org/2000/svg}g') if g.get('class') == 'rlviz-link'}
print(len(runs))" "$tmp/with/pictures/fabric.svg")
v=$(grep -c '^  - {label:' "$e1")
check "one SVG panel per variant ($n of $v)" "[ '$n' = '$v' ]"
check "same results.csv with and without pictures" "cmp -s $tmp/with/results.csv $tmp/without/results.csv"
check "same totals.csv with and without pictures" "cmp -s $tmp/with/totals.csv $tmp/without/totals.csv"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
