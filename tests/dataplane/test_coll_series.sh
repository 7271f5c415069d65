#!/usr/bin/env bash
# Issue 15's mechanism counters through rocelab-dp (virtual clock): the
# active-QP series (--coll key series, --coll-series FILE) and the per-message
# latency lines, on 2 leaves x 2 spines x 2 hosts, a 4-rank ring AllReduce.
#   - rows at exactly the interval, each size's rows cover its time;
#   - per size, the time-weighted mean of the rows' means is the "# active QPs
#     per NIC" mean (2 decimals) and the max of their maxes its max; over the
#     sweep, the same against the totals' active_qps_mean / active_qps_max;
#   - the file is byte-identical with --workers 1 and 2 (and mpirun -np 2 when built in);
#   - "# latency" counts add up to the totals' messages;
#   - bad key values, series= without a file, an unwritable file, a file
#     without --coll: exit 2 and a message naming it; no DPDK runtime
#     directory is left behind.
# usage: test_coll_series.sh ROCELAB_DP DATA_DIR
set -u
DP=$1 DATA=$2
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done
TOPO=$(realpath "$DATA/emulated.yaml")
COLL='op=allreduce,sizes=64K:256K,qps=2,mode=split,chunk=32K,series=2us'
names=()

dp() { # NAME-SUFFIX ARGS...: one run with a unique --name and a timeout
  local name="rl-cser-$$-$1"; shift
  names+=("$name")
  timeout 120 "$DP" --clock virtual --flows 0 --quiet --name "$name" --topology "$TOPO" "$@"
}

dp w1 --coll "$COLL" --coll-series "$tmp/w1.csv" > "$tmp/w1.txt" 2> "$tmp/w1.err"; rc1=$?
dp w2 --workers 2 --coll "$COLL" --coll-series "$tmp/w2.csv" > "$tmp/w2.txt" 2> "$tmp/w2.err"; rc2=$?
check "runs with --workers 1 and 2 exit 0 ($rc1, $rc2)" "[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]"
check "the series file is byte-identical with --workers 1 and 2" "cmp -s $tmp/w1.csv $tmp/w2.csv"
# under mpirun (where Open MPI is built in): rank 0 runs the NICs and writes the same file
if command -v mpirun > /dev/null && ldd "$DP" | grep -q libmpi; then
  name="rl-cser-$$-mpi"; names+=("$name")
  # (Open MPI's own allocations are not freed at exit: no leak check, as test_partitions_mpi.sh)
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 120 mpirun --oversubscribe $([ "$(id -u)" -eq 0 ] && echo --allow-run-as-root) \
    --mca btl self,vader -np 2 "$DP" --clock virtual --flows 0 --quiet --name "$name" \
    --topology "$TOPO" --coll "$COLL" --coll-series "$tmp/m2.csv" > "$tmp/m2.txt" 2>&1; rc=$?
  check "under mpirun -np 2: exit 0 ($rc), the same file" "[ $rc -eq 0 ] && cmp -s $tmp/w1.csv $tmp/m2.csv"
fi
check "the header" "[ \"\$(head -1 $tmp/w1.csv)\" = size,t_us,dt_us,qp_ns,qps_mean,qps_max,nics_active ]"
rows=$(tail -n +2 "$tmp/w1.csv" | wc -l)
check "rows for three sizes ($rows)" "[ $rows -ge 30 ] && [ \"\$(tail -n +2 $tmp/w1.csv | cut -d, -f1 | sort -u | wc -l)\" -eq 3 ]"
# rows at exactly 2 us from each size's start; only a size's last row shorter
check "rows at exactly the interval (t = i x 2.000 us, dt = 2.000 but the last of a size)" \
  "awk -F, 'NR == 1 { next }
            \$1 != size { if (size != \"\" && last_dt > 2) bad++; size = \$1; i = 0 }
            { if (\$2 != sprintf(\"%.3f\", 2 * i)) bad++; if (\$3 > 2 || \$3 <= 0) bad++;
              if (prev_size == \$1 && prev_dt != 2) bad++; prev_size = \$1; prev_dt = \$3; last_dt = \$3; i++ }
            END { exit bad > 0 }' $tmp/w1.csv"

# per size: the series against the result line and the "# active QPs" line
awk -F, 'NR > 1 { T[$1] += $3; M[$1] += $5 * $3; if ($6 > X[$1]) X[$1] = $6 }
         END { for (s in T) printf "%s %.4f %d %.3f\n", s, M[s] / T[s], X[s], T[s] }' \
  "$tmp/w1.csv" | sort > "$tmp/series.txt"
awk '/^ +[0-9]+ +[0-9]+ +float/ { size = $1; t = $6 }
     /^# active QPs per NIC/ { m = $7; sub(",", "", m); x = $12; print size, m, x, t }' \
  "$tmp/w1.txt" | sort > "$tmp/lines.txt"
check "per size: series mean = active QPs mean (2 decimals), max = max, rows cover the time ($(tr '\n' ';' < "$tmp/series.txt"))" \
  "[ \$(wc -l < $tmp/lines.txt) -eq 3 ] && join $tmp/series.txt $tmp/lines.txt |
   awk '{ d = \$2 - \$5; if (d < 0) d = -d; if (d > 0.005 || \$3 != \$6) bad++;
          d = \$4 - \$7; if (d < 0) d = -d; if (d > 0.006) bad++ } END { exit bad > 0 }'"
tot=$(grep '^# totals:' "$tmp/w1.txt")
tmean=$(sed -n 's/.* active_qps_mean=\([0-9.]*\).*/\1/p' <<< "$tot")
tmax=$(sed -n 's/.* active_qps_max=\([0-9]*\).*/\1/p' <<< "$tot")
smean=$(awk -F, 'NR > 1 { q += $4; t += $3 } END { printf "%.3f", q / (t * 1000 * 4) }' "$tmp/w1.csv")
smax=$(awk -F, 'NR > 1 && $6 > x { x = $6 } END { print x + 0 }' "$tmp/w1.csv")
check "sweep: series mean $smean = totals active_qps_mean $tmean, max $smax = $tmax" \
  "[ -n \"$tmean\" ] && [ \"$smean\" = \"$tmean\" ] && [ \"$smax\" = \"$tmax\" ]"

msgs=$(sed -n 's/.* messages=\([0-9]*\).*/\1/p' <<< "$tot")
lat=$(sed -n 's/^# latency: msgs=\([0-9]*\) .*/\1/p' "$tmp/w1.txt" | awk '{ n += $1 } END { print n }')
check "latency lines count every message (${lat:-none} = messages $msgs)" \
  "[ -n \"$msgs\" ] && [ \"${lat:-x}\" = \"$msgs\" ] && grep -q ' msg_lat_p99_us=[0-9.]* ' <<< \"$tot\""
check "latency: mean, p50, p99 at most the max" \
  "grep '^# latency:' $tmp/w1.txt | awk '{ for (i = 3; i <= NF; i++) { split(\$i, kv, \"=\"); v[kv[1]] = kv[2] }
     if (!(v[\"lat_mean_us\"] > 0 && v[\"lat_p50_us\"] <= v[\"lat_max_us\"] && v[\"lat_p99_us\"] <= v[\"lat_max_us\"] &&
           v[\"wait_p99_us\"] <= v[\"wait_max_us\"])) bad++ } END { exit bad > 0 }'"

# bad input: exit 2 and the bad pair or option in the message
for v in 50ns ten 2s; do
  dp "bad-$v" --coll "op=allreduce,series=$v" --coll-series "$tmp/x.csv" > /dev/null 2> "$tmp/bad.err"; rc=$?
  check "series=$v: exit 2 naming the pair ($(grep -m1 rocelab-dp "$tmp/bad.err"))" "[ $rc -eq 2 ] && grep -q 'series=$v' $tmp/bad.err"
done
dp nofile --coll "op=allreduce,sizes=64K,series=2us" > /dev/null 2> "$tmp/nofile.err"; rc=$?
check "series= without --coll-series: exit 2 ($(grep -m1 rocelab-dp "$tmp/nofile.err"))" "[ $rc -eq 2 ] && grep -q 'needs --coll-series' $tmp/nofile.err"
dp unwritable --coll "op=allreduce,sizes=64K" --coll-series "$tmp/no/such/dir.csv" > /dev/null 2> "$tmp/unw.err"; rc=$?
check "an unwritable --coll-series: exit 2 ($(grep -m1 rocelab-dp "$tmp/unw.err"))" "[ $rc -eq 2 ] && grep -q 'coll-series.*cannot write' $tmp/unw.err"
dp nocoll --coll-series "$tmp/y.csv" > /dev/null 2> "$tmp/nocoll.err"; rc=$?
check "--coll-series without --coll: exit 2 ($(grep -m1 rocelab-dp "$tmp/nocoll.err"))" "[ $rc -eq 2 ] && grep -q 'needs a --coll' $tmp/nocoll.err"
# --coll-series alone takes the default interval (10 us)
dp default --coll "op=allreduce,sizes=64K" --coll-series "$tmp/d.csv" > /dev/null 2>&1; rc=$?
check "--coll-series without the key: rows every 10 us" \
  "[ $rc -eq 0 ] && awk -F, 'NR == 3 { exit \$2 != \"10.000\" }' $tmp/d.csv"

# experiment.py: a series per run, a picture per size linked from the report, the
# latency in the mechanism table and per size in results.csv
cat > "$tmp/exp.yaml" <<EOF
name: series
title: series
topology: $TOPO
collective: op=allreduce,sizes=64K:128K,data=off,chunk=32K,series=1us
seeds: [1]
placements: {full: h0+h4+h1+h5}
variants:
  - {label: 1 QP, coll: qps=1}
  - {label: 4 QPs split, coll: "qps=4,mode=split"}
baseline: 1 QP
EOF
timeout 300 /usr/bin/python3 "$(dirname "$0")/../../scripts/experiment.py" "$tmp/exp.yaml" --dp "$DP" \
  --no-pictures --out "$tmp/e" > "$tmp/e.txt" 2>&1; rc=$?
[ $rc -eq 0 ] || tail -5 "$tmp/e.txt"
check "experiment.py: exit 0, a series file per run" \
  "[ $rc -eq 0 ] && [ -s $tmp/e/series/1-qp-full-s1.csv ] && [ -s $tmp/e/series/4-qps-split-full-s1.csv ]"
pngs=0
for s in 64KiB 128KiB; do
  head -c 8 "$tmp/e/series/active-qps-$s.png" 2>/dev/null | od -An -c | grep -q 'P   N   G' &&
    grep -qF "(series/active-qps-$s.png)" "$tmp/e/report.md" && pngs=$((pngs + 1))
done
check "experiment.py: a PNG per size ($pngs of 2), linked from report.md with its interval" \
  "[ $pngs -eq 2 ] && grep -q 'per 1us of virtual time' $tmp/e/report.md"
check "experiment.py: msg latency mean / p99 in the mechanism table" \
  "grep -qF '| msg latency mean / p99 (us) |' $tmp/e/report.md &&
   grep -Eq '^\| 4 QPs split \| full \| 48 \| 4\.0 \|.* \| [0-9]+\.[0-9]{2} / [0-9]+\.[0-9]{2} \| ' $tmp/e/report.md"
check "experiment.py: results.csv keeps its columns and adds the latency per size" \
  "head -1 $tmp/e/results.csv | tr -d '\\r' | grep -q '^variant,placement,seed,size,time_us,algbw,busbw,wrong,lat_mean_us,lat_p99_us,wait_mean_us\$' &&
   awk -F, 'NR > 1 && !(\$9 > 0 && \$10 >= \$9 * 0.9) { bad++ } END { exit bad > 0 || NR != 5 }' $tmp/e/results.csv"

left=$(dpdk_left "${names[@]}")
check "no DPDK runtime directory left behind ($left)" "[ $left -eq 0 ]"
tap_done
