#!/usr/bin/env bash
# experiment.py with jobs: and workload: (issue 41; scripts/exp_jobs.py), on
# the fabric of test_jobs.sh (2 leaves of 4 hosts under 1 spine, 100G) with
# its two ASTRA-sim DATA jobs of 4 GPUs (data/workload-data4.txt):
#   - jobs:, variants packed and spread (a variant's policy:): exit 0; jobs.csv
#     has 2 jobs x 2 variants, each row's alone, in-the-mix and slowdown the
#     numbers of a plain rocelab-dp --jobs run with the same policy; packed 0 %
#     slowdown, spread > 0; runs.csv one row per variant, its mean slowdown
#     the jobs'; report.md's change against the baseline is spread's mean
#     iteration over packed's;
#   - workload: (a relative astra: path, from the experiment's folder): one row,
#     the iteration time of a plain --workload run;
#   - refused with exit 2 and FILE:LINE: a policy that is not one (the nearest
#     named), placements: beside jobs:, collective: and jobs: both, a workload
#     of an unknown kind, a missing job file, a job file rocelab-dp refuses
#     (the variant named).
# usage: test_experiment_jobs.sh ROCELAB_DP DATA_DIR
set -u
DP=$(realpath "$1") DATA=$(realpath "$2")
RUN="/usr/bin/python3 $(dirname "$0")/../../scripts/experiment.py"
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done

cp "$DATA/two-leaves-one-spine.yaml" "$tmp/topo.yaml"
cp "$DATA/workload-data4.txt" "$tmp/w.txt"
printf 'jobs:\n  - {name: a, workload: "astra:w.txt", gpus: 4}\n  - {name: b, workload: "astra:w.txt", gpus: 4}\n' > "$tmp/mix.jobs.yaml"
cat > "$tmp/mix.yaml" <<'EOF'
name: mix-tiny
topology: topo.yaml
jobs: mix.jobs.yaml
variants:
  - {label: packed, policy: packed}
  - {label: spread, policy: spread}
baseline: packed
claim: {text: "tiny", kind: gain, paper_pct: 40}
EOF
timeout 300 $RUN "$tmp/mix.yaml" --dp "$DP" --out "$tmp/r" > "$tmp/mix.txt" 2>&1; rc=$?
[ $rc -eq 0 ] || tail -5 "$tmp/mix.txt"
rows=$(tail -n +2 "$tmp/r/jobs.csv" 2>/dev/null | wc -l)
check "jobs: exit 0 ($rc), jobs.csv 2 jobs x 2 variants ($rows rows), runs.csv 2 rows" \
  "[ $rc -eq 0 ] && [ $rows -eq 4 ] && [ \$(tail -n +2 $tmp/r/runs.csv | wc -l) -eq 2 ]"
# (the same runs by hand, from the job file's folder for its relative paths)
for pol in packed spread; do
  sed "1i policy: $pol" "$tmp/mix.jobs.yaml" > "$tmp/$pol.jobs.yaml"
  (cd "$tmp" && timeout 120 "$DP" --clock virtual --quiet --name "rl-expj-$$-$pol" --topology topo.yaml \
     --seed 1 --jobs "$pol.jobs.yaml" --json "$pol.json" > /dev/null 2>&1)
  check "jobs: $pol: each job's alone, in-the-mix and slowdown = a plain --jobs run's" "/usr/bin/python3 -c '
import csv, json, sys
want = {j[\"name\"]: j for j in json.load(open(sys.argv[1]))[\"mix\"][\"jobs\"]}
got = [r for r in csv.DictReader(open(sys.argv[2])) if r[\"variant\"] == sys.argv[3]]
assert len(got) == 2
for r in got:
    w = want[r[\"job\"]]
    assert float(r[\"alone_us\"]) == w[\"alone_us\"] and float(r[\"mix_us\"]) == w[\"mix_us\"], (r, w)
    assert abs(float(r[\"slowdown_pct\"]) - w[\"slowdown_pct\"]) < 1e-9 and r[\"policy\"] == sys.argv[3]
' $tmp/$pol.json $tmp/r/jobs.csv $pol"
done
check "jobs: packed 0 % slowdown, spread > 0 %, runs.csv's mean = the jobs' mean" "/usr/bin/python3 -c '
import csv, statistics, sys
j = list(csv.DictReader(open(sys.argv[1]))); r = {x[\"variant\"]: x for x in csv.DictReader(open(sys.argv[2]))}
s = {v: [float(x[\"slowdown_pct\"]) for x in j if x[\"variant\"] == v] for v in (\"packed\", \"spread\")}
assert s[\"packed\"] == [0.0, 0.0] and min(s[\"spread\"]) > 0, s
for v in s:
    assert abs(float(r[v][\"slowdown_mean_pct\"]) - statistics.mean(s[v])) < 1e-6
' $tmp/r/jobs.csv $tmp/r/runs.csv"
pct=$(/usr/bin/python3 -c '
import csv, statistics, sys
j = list(csv.DictReader(open(sys.argv[1])))
p, s = (statistics.mean(float(x["mix_us"]) for x in j if x["variant"] == v) for v in ("packed", "spread"))
print(f"{100 * (s / p - 1):+.1f}%")' "$tmp/r/jobs.csv")
check "report.md: spread's change against packed ($pct)" "grep -q '^| spread | [0-9.]* | $pct |' $tmp/r/report.md"

cat > "$tmp/wl.yaml" <<'EOF'
name: wl-tiny
topology: topo.yaml
workload: "astra:w.txt,hosts=h0+h4+h1+h5"
variants: [{label: one}]
baseline: one
EOF
timeout 300 $RUN "$tmp/wl.yaml" --dp "$DP" --out "$tmp/w" > "$tmp/wl.txt" 2>&1; rc=$?
want=$(timeout 120 "$DP" --clock virtual --name "rl-expj-$$-wl" --topology "$tmp/topo.yaml" \
  --workload "astra:$tmp/w.txt,hosts=h0+h4+h1+h5" 2>/dev/null | awk '$2 == "job:" && $4 == "1:" { print $6 }')
got=$(awk -F, 'NR == 2 { print $9 }' "$tmp/w/jobs.csv" 2>/dev/null)
check "workload: exit 0 ($rc), one row, its iteration $got us = a plain --workload run's ($want us)" \
  "[ $rc -eq 0 ] && [ \$(tail -n +2 $tmp/w/jobs.csv | wc -l) -eq 1 ] && [ -n '$want' ] && awk -v a='$got' -v b='$want' 'BEGIN { exit !(a == b) }'"

refused() { # NAME WANT: the file $tmp/NAME.yaml refused with exit 2 and WANT in the message
  timeout 120 $RUN "$tmp/$1.yaml" --dp "$DP" --out "$tmp/x-$1" > "$tmp/$1.out" 2>&1; local rc=$?
  check "refused: $1: exit 2 ($rc), '$2'" "[ $rc -eq 2 ] && grep -qF -- \"$2\" $tmp/$1.out"
}
sed 's/policy: spread/policy: sprad/' "$tmp/mix.yaml" > "$tmp/policy.yaml"
refused policy "$tmp/policy.yaml:6: policy: unknown policy 'sprad' (did you mean spread?)"
sed 's/^baseline: packed/placements: {all: all}\nbaseline: packed/' "$tmp/mix.yaml" > "$tmp/placements.yaml"
refused placements "$tmp/placements.yaml:7: placements: only with collective:"
sed 's/^jobs: mix.jobs.yaml/jobs: mix.jobs.yaml\ncollective: op=allreduce/' "$tmp/mix.yaml" > "$tmp/both.yaml"
refused both "$tmp/both.yaml:3: one of collective, workload, jobs says what runs; got collective, jobs"
sed 's/astra:w.txt/nccl:w.txt/' "$tmp/wl.yaml" > "$tmp/kind.yaml"
refused kind "$tmp/kind.yaml:3: workload: expected"
sed 's/^jobs: mix.jobs.yaml/jobs: none.yaml/' "$tmp/mix.yaml" > "$tmp/nofile.yaml"
refused nofile "$tmp/nofile.yaml:3: jobs: expected a job file"
printf 'jobs:\n  - {name: a, workload: "astra:w.txt", gpus: 4}\n  - {name: big, workload: "astra:w.txt", gpus: 8}\n' > "$tmp/big.jobs.yaml"
sed 's/^jobs: mix.jobs.yaml/jobs: big.jobs.yaml/' "$tmp/mix.yaml" > "$tmp/nofit.yaml"
refused nofit "$tmp/nofit.yaml:5: variant 'packed': rocelab-dp --check refuses it:"
# a run whose packet pool ran dry is flagged (runs.csv's pool_dry, a line in report.md);
# these runs' pools never ran dry
dry=$(/usr/bin/python3 -c "import csv; print(' '.join(r['pool_dry'] for r in csv.DictReader(open('$tmp/r/runs.csv'))))")
check "runs.csv: pool_dry 0 for both variants ($dry), no 'Not the model's' line" \
  "[ \"$dry\" = '0 0' ] && ! grep -q \"Not the model's\" $tmp/r/report.md"
n=$(PYTHONPATH="$(dirname "$0")/../../scripts" /usr/bin/python3 -c "import exp_jobs; print(exp_jobs.pool_dry(
    'rocelab-dp: the packet pool ran dry 12 times: senders waited\nother\nrocelab-dp: the packet pool ran dry 3 times: x'))")
check "pool_dry sums the parent's and the runs alone's lines (15: $n)" "[ \"$n\" = 15 ]"
# report.md names exactly the variants whose pool ran dry (a run's pool_dry above 0)
named=$(PYTHONPATH="$(dirname "$0")/../../scripts" /usr/bin/python3 -c "import exp_jobs
jobs = [{'job': 'a', 'variant': v, 'gpus': 4, 'mix_us': 10.0, 'slowdown_pct': 0.0} for v in ('x', 'y', 'z')]
runs = [{'variant': 'x', 'pool_dry': 0}, {'variant': 'y', 'pool_dry': 7}, {'variant': 'z', 'pool_dry': 0}]
print(' | '.join(l for l in exp_jobs.report({'baseline': 'x'}, ['x', 'y', 'z'], jobs, runs, []) if 'Not the model' in l))")
check "report.md: a run whose pool ran dry is named, the others not ($named)" \
  "[[ \"\$named\" == *'ran dry in y ('* ]]"
check "no DPDK runtime directory left behind" "[ $(dpdk_left "rl-expj-$$-packed" "rl-expj-$$-spread" "rl-expj-$$-wl") -eq 0 ]"
tap_done
