#!/usr/bin/env bash
# The experiment runner end to end (--smoke: one seed, two sizes): CSV, plot
# and report are written, two runs give the same numbers, bad files are refused.
# usage: test_experiment.sh ROCELAB_DP EXPERIMENTS_DIR
set -u
DP=$1 EXP=$2
RUN="/usr/bin/python3 $(dirname "$0")/../../scripts/experiment.py"
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done

for i in 1 2; do
  timeout 600 $RUN "$EXP/e1-eecmp-qp-scaling.yaml" --smoke --dp "$DP" --out "$tmp/r$i" > "$tmp/out$i.txt" 2>&1
  rc=$?
done
check "E1 smoke run exits 0" "[ $rc -eq 0 ]"
rows=$(tail -n +2 "$tmp/r1/results.csv" | wc -l)
check "results.csv: 5 variants x 2 sizes ($rows rows)" "[ $rows -eq 10 ]"
check "busbw numbers are positive and below 100G line rate" "awk -F, 'NR > 1 && !(\$7 > 0 && \$7 <= 12.5) { bad++ } END { exit bad > 0 }' $tmp/r1/results.csv"
check "two runs give identical results (virtual clock)" "cmp -s $tmp/r1/results.csv $tmp/r2/results.csv"
check "busbw.png is a PNG" "head -c 8 $tmp/r1/busbw.png | od -An -c | grep -q 'P   N   G'"
check "report.md compares with the paper" "grep -q 'Largest gain over ECMP, 1 QP' $tmp/r1/report.md && grep -q 'the paper: up to +40%' $tmp/r1/report.md"
printf 'name: x\ntopology: nope.yaml\ncollective: op=allreduce\nvariants: [{label: a}]\nbaseline: b\n' > "$tmp/bad.yaml"
$RUN "$tmp/bad.yaml" --dp "$DP" > "$tmp/bad.txt" 2>&1; rc=$?
check "a baseline that is not a variant: exit 2 ($(cat $tmp/bad.txt))" "[ $rc -eq 2 ] && grep -q 'baseline' $tmp/bad.txt"
# nccl: and nic: keys: NCCL's keys reach rocelab-dp, the report counts the work per message
cat > "$tmp/nccl.yaml" <<EOF2
name: nccl-keys
topology: $(cd "$EXP" && pwd)/clos-2x4x4-emulated.yaml
collective: op=allreduce,sizes=1M,data=off
nccl: {model: nccl, NCCL_IB_QPS_PER_CONNECTION: 4, proxy_post_wqe: 200ns, proxy_poll_cqe: 100ns}
nic: "quantum=16K"
placements: {full: h0+h4+h1+h5}
variants:
  - {label: split, nccl: {NCCL_IB_SPLIT_DATA_ON_QPS: 1}}
  - {label: rr, nccl: {NCCL_IB_SPLIT_DATA_ON_QPS: 0}}
baseline: split
EOF2
timeout 300 $RUN "$tmp/nccl.yaml" --dp "$DP" --no-pictures --out "$tmp/n" > "$tmp/n.txt" 2>&1; rc=$?
[ $rc -eq 0 ] || tail -5 "$tmp/n.txt"
check "nccl: keys run (exit $rc)" "[ $rc -eq 0 ] && [ \$(tail -n +2 $tmp/n/results.csv | wc -l) -eq 2 ]"
check "mechanism table: split 4 WQEs and 8 CQEs per message, rr 1 and 2" \
  "grep -Eq '^\\| split \\| full \\| [0-9]+ \\| 4\\.0 \\| 8\\.0 \\|' $tmp/n/report.md && grep -Eq '^\\| rr \\| full \\| [0-9]+ \\| 1\\.0 \\| 2\\.0 \\|' $tmp/n/report.md"
# queue peaks: the column is filled from the run's link table (one frame at least), and the
# classes are right: leaf>spine is "up", a link to a host "down", host>leaf, spine>leaf and
# links that carried nothing count in neither
check "totals.csv: qpeak_up and qpeak_down of every run are at least one 1 KB frame" \
  "awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[\$i] = i; if (!c[\"qpeak_up\"] || !c[\"qpeak_down\"]) bad++; next }
            !(\$c[\"qpeak_up\"] >= 1000 && \$c[\"qpeak_down\"] >= 1000) { bad++ } END { exit bad > 0 }' $tmp/n/totals.csv &&
   grep -q 'peak queue up / down' $tmp/n/report.md"
peaks=$(/usr/bin/python3 - "$(dirname "$0")/../../scripts/experiment.py" <<'EOF2'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("experiment", sys.argv[1])
e = importlib.util.module_from_spec(spec); spec.loader.exec_module(e)
# (the link and host tables as rocelab-dp --json gives them: from, to, packets, peak queue)
links = [("h0", "leaf0", 10, 5000), ("leaf0", "h0", 10, 7000), ("h1", "leaf0", 10, 5000),
         ("leaf0", "h1", 10, 9000), ("leaf0", "spine0", 10, 20000), ("leaf0", "spine1", 0, 0),
         ("spine0", "leaf0", 10, 90000)]
doc = {"hosts": [{"name": "h0"}, {"name": "h1"}],
       "links": [{"from": a, "to": b, "packets": n, "peak_queue_bytes": q} for a, b, n, q in links]}
p = e.queue_peaks(doc)
print(p.get("qpeak_up"), p.get("qpeak_down"))
EOF2
)
check "queue_peaks classes: up = leaf>spine with packets (20000), down = to hosts (8000): got $peaks" "[ '$peaks' = '20000 8000' ]"
sed -i 's/NCCL_IB_QPS_PER_CONNECTION: 4/NCCL_IB_QPS_PER_CONNECTION: 129/' "$tmp/nccl.yaml"
timeout 120 $RUN "$tmp/nccl.yaml" --dp "$DP" --no-pictures --out "$tmp/n2" > "$tmp/n2.txt" 2>&1; rc=$?
check "an NCCL key out of range: exit 2 naming the pair" "[ $rc -eq 2 ] && grep -q 'NCCL_IB_QPS_PER_CONNECTION=129: must be 1..128' $tmp/n2.txt"
sed -i 's/^nccl: .*/nccl: [model, nccl]/' "$tmp/nccl.yaml"
$RUN "$tmp/nccl.yaml" --dp "$DP" > "$tmp/n3.txt" 2>&1; rc=$?
check "nccl: not a mapping: exit 2" "[ $rc -eq 2 ] && grep -q 'nccl: expected a mapping' $tmp/n3.txt"
# A file-level dp_args reaches every run; a run whose packet pool ran dry (an emulator
# limit: NICs lose frames) is listed with the failed runs, not passed off as the model's.
cat > "$tmp/dry.yaml" <<EOF2
name: dry-pool
topology: {generate: "spines=4,leaves=8,hosts=8,host-rate=400G,leaf-rate=400G,host-mtu=9000,attach=emulated"}
collective: op=allreduce,sizes=4M,data=off,qps=4,mode=split
dp_args: ["--mbufs", "1024"]
variants: [{label: split}]
baseline: split
EOF2
timeout 300 $RUN "$tmp/dry.yaml" --dp "$DP" --no-pictures --out "$tmp/dry" > "$tmp/dry.txt" 2>&1; rc=$?
check "dp_args --mbufs 1024: the run's dry pool is listed under 'Runs that failed' (exit $rc)" \
  "[ $rc -eq 0 ] && grep -q '^## Runs that failed' $tmp/dry/report.md && grep -q 'packet pool ran dry [0-9]* times' $tmp/dry/report.md"
sed 's/^dp_args: .*/dp_args: --mbufs/' "$tmp/dry.yaml" > "$tmp/dry-bad.yaml"
$RUN "$tmp/dry-bad.yaml" --dp "$DP" --no-pictures --out "$tmp/dry-bad" > "$tmp/dry-bad.txt" 2>&1; rc=$?
check "dp_args not a list: exit 2 naming it" "[ $rc -eq 2 ] && grep -q 'dp_args: expected a list' $tmp/dry-bad.txt"
# A variant whose topology does not load (an event on a link that does not exist) is
# refused before any run, with rocelab-dp's FILE:LINE message.
cat > "$tmp/badlink.yaml" <<EOF2
name: bad-link
topology: $(cd "$EXP" && pwd)/clos-2x4x4-emulated.yaml
collective: op=allreduce,sizes=1M,data=off
placements: {full: h0+h4}
variants:
  - {label: good}
  - {label: down, topology: {events: [{at: 0s, link: leaf0-nowhere, action: down}]}}
baseline: good
EOF2
$RUN "$tmp/badlink.yaml" --dp "$DP" --no-pictures --out "$tmp/badlink" > "$tmp/badlink.txt" 2>&1; rc=$?
check "an event on an unknown link: exit 2 before any run, naming the variant and FILE:LINE" \
  "[ $rc -eq 2 ] && grep -q \"variant 'down'\" $tmp/badlink.txt && grep -q 'yaml:[0-9]*: .*unknown link' $tmp/badlink.txt && [ ! -e $tmp/badlink/results.csv ] && ! grep -q '\\[1/' $tmp/badlink.txt"
# SIGTERM to experiment.py alone (its rocelab-dp is not signalled), twice at once as a
# Ctrl-C pressed twice or a signal also forwarded by 'timeout': it stops the run under
# way with SIGTERM and exits 143; no rocelab-dp, DPDK runtime directory or temporary
# folder is left. (A signal handled inside Popen.wait once deadlocked experiment.py.)
# The signal comes during the second run or later: the runs that finished keep their
# rows in results.csv and totals.csv, and experiment.py says how many of how many.
mkdir -p "$tmp/tmpdir"
TMPDIR="$tmp/tmpdir" timeout -k 10 120 $RUN "$EXP/e1-eecmp-qp-scaling.yaml" --dp "$DP" --no-pictures \
  --out "$tmp/term" > "$tmp/term.txt" 2>&1 & epid=$!
for _ in $(seq 600); do pgrep -f -- "--name rl-exp-[0-9]+-1 " > /dev/null && break; sleep 0.1; done
sleep 1
xp=$(pgrep -f -- "^/usr/bin/python3 .*scripts/experiment.py $EXP/e1-eecmp-qp-scaling.yaml --dp $DP --no-pictures --out $tmp/term")
kill -TERM $xp 2>/dev/null; kill -TERM $xp 2>/dev/null; wait $epid; rc=$?
left=$(ls /var/run/dpdk 2>/dev/null | grep -c "^rl-exp-$xp-")
check "SIGTERM: exit 143, no rocelab-dp, runtime directory or temporary folder left (rc $rc, $left dirs, $(ls $tmp/tmpdir | wc -l) tmp)" \
  "[ $rc -eq 143 ] && [ $left -eq 0 ] && [ -z \"\$(ls $tmp/tmpdir)\" ] && ! pgrep -f -- '--name rl-exp-$xp-' > /dev/null"
done_runs=$(($(wc -l < "$tmp/term/totals.csv" 2>/dev/null || echo 1) - 1))
check "SIGTERM: the $done_runs finished runs' rows stay in results.csv and totals.csv, and it says so" \
  "[ $done_runs -ge 1 ] && [ $done_runs -lt 15 ] && grep -q '^\"ECMP, 1 QP\",full,1,1048576,' $tmp/term/results.csv && grep -q \"experiment.py: $done_runs of 15 runs finished; their numbers are in $tmp/term/results.csv\" $tmp/term.txt && [ ! -e $tmp/term/report.md ]"
# --run-timeout: a run longer than the limit is stopped (SIGTERM: nothing left) and the
# experiment exits 1, a runtime failure; a negative limit is bad input (exit 2). The run
# is E1's at 256 MiB, seconds of work: at its own 1-16 MiB a quiet machine finished a run
# within the 0.3 s (the test then failed, rc 0).
sed -e "s#^topology: .*#topology: $(realpath "$EXP")/clos-2x4x4-emulated.yaml#" -e 's#sizes=1M:16M#sizes=256M#' \
  "$EXP/e1-eecmp-qp-scaling.yaml" > "$tmp/rto.yaml"
TMPDIR="$tmp/tmpdir" timeout -k 10 180 $RUN "$tmp/rto.yaml" --dp "$DP" --no-pictures --run-timeout 0.3 \
  --out "$tmp/rto" > "$tmp/rto.txt" 2>&1; rc=$?
check "--run-timeout 0.3: exit 1 naming the limit, no temporary folder left (rc $rc)" \
  "[ $rc -eq 1 ] && grep -q sizes=256M $tmp/rto.yaml && grep -q 'ran longer than 0.3 s (--run-timeout)' $tmp/rto.txt && [ -z \"\$(ls $tmp/tmpdir)\" ]"
$RUN "$EXP/e1-eecmp-qp-scaling.yaml" --dp "$DP" --run-timeout -1 > "$tmp/rto2.txt" 2>&1; rc=$?
check "--run-timeout -1: exit 2" "[ $rc -eq 2 ] && grep -q 'run-timeout' $tmp/rto2.txt"
tap_done
