#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 39: scripts/experiment.py checks every variant before the first run. A mistake
# in the LAST variant (a name, an NCCL value out of range) is refused (exit 2) naming
# the user's FILE:LINE, with the valid values and the nearest, before rocelab-dp is
# started even once (a stand-in records every call) and before the results folder is
# made; a failed run exits 1.
# Without matplotlib the tables and report are still written and stderr says why there
# are no pictures (with ROCELAB_DP: a real run); without yaml, exit 2 naming python3-yaml.
# scripts/flow-scale.py refuses more --jobs than the fabric holds (exit 2) before running,
# and more --mix-jobs than its mix file has.
# scripts/flow-vs-packet.py takes a jobs: file's case as FILE:VARIANT: and refuses a
# placement for it, or none for a collective (exit 2, nothing run); its mix row holds
# the mean iteration in the mix of a plain rocelab-dp --jobs run on each engine; with
# --reference flow --refill 1us, of the exact flow engine and of flow,refill=1us.
# usage: test_experiment_check.sh SOURCE_ROOT [ROCELAB_DP]
set -u
root=$(realpath "$1") real_dp=${2:-}
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"
EXP=$root/scripts/experiment.py
export PYTHONDONTWRITEBYTECODE=1
pids=()
trap 'rm -rf "$tmp"; for p in "${pids[@]}"; do rm -rf /var/run/dpdk/rl-exp-$p-*; done' EXIT

# the stand-in: a --check goes to the real rocelab-dp (the --coll keys' one owner;
# without one, passes); any other call is a run: recorded, and it fails
cat > "$tmp/fake-dp" <<DP
#!/bin/sh
case " \$* " in *" --check "*) [ -z "$real_dp" ] && exit 0; exec "$real_dp" "\$@" ;; esac
echo "\$*" >> "\$(dirname "\$0")/dp-calls"
echo "fake-dp: this run fails" >&2
exit 1
DP
chmod +x "$tmp/fake-dp"

# the experiment: line 9 is the last variant (the tests below edit it by line number)
good() {
  cat <<YAML
name: tiny
topology: $root/experiments/clos-2x4x4-emulated.yaml
collective: op=allreduce,sizes=64K:128K,data=off,sport=rxe
seeds: [1]
placements: {full: h0+h4+h1+h5}
variants:
  - {label: "ECMP 1 QP", switch: {profile: 5tuple}, coll: "qps=1"}
  - {label: "E-ECMP 4 QPs", switch: {profile: eecmp}, coll: "qps=4,mode=split"}
  - {label: "E-ECMP 4 QPs rr", switch: {profile: eecmp}, coll: "qps=4,mode=rr"}
baseline: "ECMP 1 QP"
YAML
}

# NAME SED-EXPRESSION WANTED-TEXT: the edited file is refused, exit 2, naming tiny.yaml:LINE
refused() {
  local rc=0 f=$tmp/$1/tiny.yaml
  mkdir -p "$tmp/$1"
  good | sed "$2" > "$f"
  rm -f "$tmp/dp-calls"
  /usr/bin/python3 "$EXP" "$f" --out "$tmp/$1/out" --dp "$tmp/fake-dp" --no-pictures \
    > /dev/null 2> "$tmp/$1/err" || rc=$?
  check "$1: exit 2 ($rc)" "[ $rc -eq 2 ]"
  check "$1: stderr says '$3'" "grep -qF -- \"$3\" '$tmp/$1/err'"
  check "$1: no rocelab-dp started, no results folder" "[ ! -e '$tmp/dp-calls' ] && [ ! -e '$tmp/$1/out' ]"
  sed 's/^/# /' "$tmp/$1/err" | head -3
}

refused profile '9s/profile: eecmp/profile: eecmpp/' \
  "$tmp/profile/tiny.yaml:9: switch: profile: unknown name 'eecmpp' (did you mean eecmp?); valid: 5tuple, eecmp, dqpn, 3tuple"
check "profile: no temporary file named" "! grep -q 'rocelab-exp-' '$tmp/profile/err'"
refused key '9s/coll:/colll:/' \
  "$tmp/key/tiny.yaml:9: unknown variant key 'colll' (did you mean coll?); valid: label, switch, topology, coll, dp_args, nccl"
if [ -n "$real_dp" ]; then # (the --coll keys: rocelab-dp --check reads them)
refused mode '9s/mode=rr/mode=roundrobin/' \
  "$tmp/mode/tiny.yaml:9: coll: mode=roundrobin: must be split, rr or ctran"
refused op '3s/op=allreduce/op=all_reduce/' \
  "$tmp/op/tiny.yaml:3: collective: op=all_reduce: must be allreduce, allgather, reducescatter, alltoall, incast, broadcast, reduce or sendrecv (did you mean allreduce?)"
refused nccl '9s/coll: "qps=4,mode=rr"/nccl: {NCCL_IB_QPS_PER_CONNECTION: 129}/' \
  "$tmp/nccl/tiny.yaml:9: nccl: NCCL_IB_QPS_PER_CONNECTION=129: must be 1..128"
fi
refused host '5s/h0+h4+h1+h5/h0+h44+h1+h5/' \
  "$tmp/host/tiny.yaml:5: placement 'full': unknown host 'h44' (did you mean h4?)"
refused baseline '10s/ECMP 1 QP/ECMP 2 QPs/' \
  "$tmp/baseline/tiny.yaml:10: baseline: unknown variant label 'ECMP 2 QPs'"

# a run that fails is not bad input: exit 1
mkdir -p "$tmp/fail"
good > "$tmp/fail/tiny.yaml"
rc=0; /usr/bin/python3 "$EXP" "$tmp/fail/tiny.yaml" --out "$tmp/fail/out" --dp "$tmp/fake-dp" \
  --no-pictures > /dev/null 2> "$tmp/fail/err" || rc=$?
check "a failed run: exit 1 ($rc), rocelab-dp's message shown" \
  "[ $rc -eq 1 ] && grep -q 'fake-dp: this run fails' '$tmp/fail/err'"

# no yaml module: exit 2 naming the Debian package
hide() { # MODULE ARGS...: experiment.py with MODULE hidden from the interpreter (its
  local m=$1  # folder first on sys.path, as when python3 runs it)
  shift
  /usr/bin/python3 -c "import os, runpy, sys; sys.modules['$m'] = None; sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(sys.argv[0]); runpy.run_path(sys.argv[0], run_name='__main__')" "$EXP" "$@"
}
rc=0; hide yaml "$tmp/fail/tiny.yaml" --dp "$tmp/fake-dp" > /dev/null 2> "$tmp/noyaml.err" || rc=$?
check "no yaml: exit 2 ($rc) naming python3-yaml" "[ $rc -eq 2 ] && grep -q 'python3-yaml' '$tmp/noyaml.err'"

# scripts/flow-scale.py checks --jobs against each fabric's room (3 jobs of 1,024 GPUs
# on the zone: 192 racks of 16) before its first run: exit 2, naming both numbers
if [ -n "$real_dp" ] && [ -x /usr/bin/time ]; then
  for t in scale routing; do
    rc=0; /usr/bin/python3 "$root/scripts/flow-scale.py" --build "$(dirname "$(dirname "$real_dp")")" \
      --table $t --jobs 4 > "$tmp/fs.out" 2> "$tmp/fs.err" || rc=$?
    check "flow-scale.py --table $t --jobs 4: exit 2 ($rc), the fabric holds 3, nothing run" \
      "[ $rc -eq 2 ] && grep -q -- '--jobs 4: the .* fabric holds 3 job(s) of 1024 GPUs (3072 hosts in 192 racks)' '$tmp/fs.err' && [ ! -s '$tmp/fs.out' ]"
  done
  # --table mix takes at most the mix file's jobs (192 in experiments/mix-24k.jobs.yaml)
  rc=0; /usr/bin/python3 "$root/scripts/flow-scale.py" --build "$(dirname "$(dirname "$real_dp")")" \
    --table mix --mix-jobs 193 > "$tmp/fs.out" 2> "$tmp/fs.err" || rc=$?
  check "flow-scale.py --table mix --mix-jobs 193: exit 2 ($rc), the file has 192, nothing run" \
    "[ $rc -eq 2 ] && grep -q -- '--mix-jobs 193: .*mix-24k.jobs.yaml has 192 jobs' '$tmp/fs.err' && [ ! -s '$tmp/fs.out' ]"
fi

# scripts/flow-vs-packet.py and a jobs: file (two 4-GPU jobs on 2 leaves, seconds): the
# case's placement is checked against the file before any run; the row's packet and flow
# values are the jobs' mean mix_us of plain --jobs runs without the file's proxy cost and
# nic: line (the flow engine refuses the proxy costs)
if [ -n "$real_dp" ]; then
  dp_abs=$(realpath "$real_dp")  # (the runs below are from the test's folder)
  FVP="/usr/bin/python3 $root/scripts/flow-vs-packet.py --build $(dirname "$(dirname "$dp_abs")")"
  pids+=($$)  # (the plain runs' DPDK prefixes: rl-exp-$$-ENGINE)
  mkdir -p "$tmp/fvp"
  cp "$root/tests/dataplane/data/two-leaves-one-spine.yaml" "$tmp/fvp/topo.yaml"
  cp "$root/tests/dataplane/data/workload-data4.txt" "$tmp/fvp/w.txt"
  printf 'jobs:\n  - {name: a, workload: "astra:w.txt", gpus: 4}\n  - {name: b, workload: "astra:w.txt", gpus: 4}\n' \
    > "$tmp/fvp/mix.jobs.yaml"
  printf '%s\n' 'name: fvp-tiny' 'topology: topo.yaml' 'jobs: mix.jobs.yaml' \
    'nccl: {model: nccl, proxy_post_wqe: 200ns}' 'nic: "quantum=16K"' 'seeds: [1]' \
    'variants:' '  - {label: one}' 'baseline: one' > "$tmp/fvp/mix.yaml"
  for c in "$tmp/fvp/mix.yaml:one:full|it has no placements; write the case FILE:VARIANT:" \
           "e1-nccl-128.yaml:ECMP, 1 QP:|no placement '' (has: rack-aware, random)"; do
    rc=0; $FVP --case "${c%%|*}" > "$tmp/fvp/out" 2> "$tmp/fvp/err" || rc=$?
    check "flow-vs-packet.py --case '${c%%|*}': exit 2 ($rc), says why, no row" \
      "[ $rc -eq 2 ] && grep -qF -- \"${c#*|}\" '$tmp/fvp/err' && [ ! -s '$tmp/fvp/out' ]"
  done
  rc=0; (cd "$tmp/fvp" && timeout 120 $FVP --case mix.yaml:one --out row.md > out 2> err) || rc=$?
  for f in packet flow; do
    (cd "$tmp/fvp" && timeout 60 "$dp_abs" --topology topo.yaml --clock virtual --quiet --seed 1 \
      --name "rl-exp-$$-$f" --jobs mix.jobs.yaml --job-coll model=nccl --fabric $f --json $f.json > /dev/null 2>&1)
  done
  check "flow-vs-packet.py --case mix.yaml:one: exit 0 ($rc), the mix's mean iteration of plain runs" \
    "[ $rc -eq 0 ] && /usr/bin/python3 -c '
import json, statistics, sys
mean = lambda f: \"%.1f\" % statistics.mean(j[\"mix_us\"] for j in json.load(open(f))[\"mix\"][\"jobs\"])
cells = [c.strip() for c in open(sys.argv[1]).read().splitlines()[2].split(\"|\")]
sys.exit(not (cells[2] == \"mix: mean iteration (us)\" and cells[3:5] == [mean(sys.argv[2]), mean(sys.argv[3])]))
' '$tmp/fvp/row.md' '$tmp/fvp/packet.json' '$tmp/fvp/flow.json'"
  [ $rc -eq 0 ] || sed 's/^/# /' "$tmp/fvp/err" | tail -3
  check "flow-vs-packet.py: each job's iteration on both engines on stderr" \
    "grep -q '^#   a: packet .* us, flow .* us' '$tmp/fvp/err' && grep -q '^#   b: packet' '$tmp/fvp/err'"
  # --reference flow --refill 1us: the exact flow engine against flow,refill=1us, each
  # the mean of a plain run's jobs on that engine
  rc=0; (cd "$tmp/fvp" && timeout 120 $FVP --reference flow --refill 1us --case mix.yaml:one --out rr.md \
    > out 2> err) || rc=$?
  (cd "$tmp/fvp" && timeout 60 "$dp_abs" --topology topo.yaml --clock virtual --quiet --seed 1 \
    --name "rl-exp-$$-refill" --jobs mix.jobs.yaml --job-coll model=nccl --fabric flow,refill=1us \
    --json refill.json > /dev/null 2>&1)
  check "flow-vs-packet.py --reference flow --refill 1us: exit 0 ($rc), the header names both, plain runs' means" \
    "[ $rc -eq 0 ] && grep -q '^| case | what | flow | flow,refill=1us |' '$tmp/fvp/rr.md' && /usr/bin/python3 -c '
import json, statistics, sys
mean = lambda f: \"%.1f\" % statistics.mean(j[\"mix_us\"] for j in json.load(open(f))[\"mix\"][\"jobs\"])
cells = [c.strip() for c in open(sys.argv[1]).read().splitlines()[2].split(\"|\")]
sys.exit(not (cells[3:5] == [mean(sys.argv[2]), mean(sys.argv[3])]))
' '$tmp/fvp/rr.md' '$tmp/fvp/flow.json' '$tmp/fvp/refill.json'"
fi

# no matplotlib: a real run of the first two variants writes the tables and the report
if [ -n "$real_dp" ]; then
  mkdir -p "$tmp/nomp"
  good | sed 9d > "$tmp/nomp/tiny.yaml"
  hide matplotlib "$tmp/nomp/tiny.yaml" --out "$tmp/nomp/out" --dp "$real_dp" \
    > /dev/null 2> "$tmp/nomp/err" &
  pids+=($!)
  rc=0; wait $! || rc=$?
  o=$tmp/nomp/out
  rows=$(($(wc -l < "$o/results.csv" 2>/dev/null || echo 1) - 1))
  check "no matplotlib: exit 0 ($rc)" "[ $rc -eq 0 ]"
  check "no matplotlib: results.csv has 2 variants x 2 sizes ($rows rows), totals.csv 2 runs" \
    "[ $rows -eq 4 ] && [ \$(wc -l < '$o/totals.csv') -eq 3 ]"
  check "no matplotlib: report.md written, saying why there are no plots" \
    "grep -q 'No plots or pictures: python3 has no matplotlib' '$o/report.md'"
  check "no matplotlib: no busbw.png, no pictures/" "[ ! -e '$o/busbw.png' ] && [ ! -e '$o/pictures' ]"
  check "no matplotlib: stderr says only the pictures need python3-matplotlib" \
    "grep -q 'only they need it: apt install python3-matplotlib' '$tmp/nomp/err'"
fi
tap_done
