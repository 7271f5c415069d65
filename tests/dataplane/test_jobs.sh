#!/usr/bin/env bash
# rocelab-dp --jobs FILE (issue 41, item 4): jobs placed by the scheduler and
# run at once on one fabric, each also alone. The fabric, written here: 2
# leaves under 1 spine, 4 emulated hosts each (h0-h3 on leaf0, h4-h7 on
# leaf1), 100 Gbit/s links, so the one uplink of each leaf is all that
# crosses between them. Two jobs of 4 GPUs, each the ASTRA-sim DATA file
# data/workload-data4.txt (2 AllReduces of 256 KiB and 1 MiB).
#   - packed: a on leaf0 (h0-h3), b on leaf1 (h4-h7); each job's time alone
#     is that of a plain --workload run of it on the same hosts; the two
#     share no link, so each keeps its alone time in the mix, exactly, and
#     the slowdown is 0.00 %; --jobs-svg draws both jobs;
#   - spread: a on h0 h4 h1 h5, b on h2 h6 h3 h7 (one rack after the other):
#     both rings cross leaf0-spine0-leaf1; alone, each has a plain run's
#     time; in the mix both slow down (slowdown > 0), and the link named
#     first for each is one direction of a leaf's uplink to spine0; packed
#     names no spine link (its traffic stays under its leaf); with --flows 0
#     the links are not tracked, and the line says so;
#   - --json (spread): valid against the schema, and its "mix" says what the
#     text says (jobs_json_check.py: each job's line, the mix's mean, p99
#     and max slowdown, the links, each job's own report row by row); the
#     mean is the two slowdowns' mean, p99 and max the larger; packed: each
#     job's exposed communication share alone is its share in the mix;
#   - --jobs-mix-only (spread): no run alone, each job's time in the mix as
#     with them, the mix's iteration line their mean and max, no slowdown
#     line, --json valid with alone and slowdown null; without --jobs: exit 2;
#   - --job-coll qps=4,mode=split reaches the jobs' collectives (4 active QPs);
#   - refused with exit 2: an unknown key (FILE:LINE, the key named), a mix
#     that does not fit (the job named), a workload that cannot be read
#     (FILE:LINE: job NAME), --jobs-svg without --jobs, --jobs with --workload;
#   - --te (data/two-leaves-two-spines-servers.yaml: 4 servers of 2 GPUs, 2
#     per leaf, 2 spines): the two jobs spread (a on s0+s2, b on s1+s3),
#     seed 1. Under ECMP both jobs' rings leave leaf0 on one uplink (the
#     first link named for each, the same leafN>spineM) and both slow down;
#     with --te the controller places exactly the 4 network connections of
#     the two rings (no NVLink pair of one server's GPUs), the two leaving
#     leaf0 on different uplinks and the two leaving leaf1 too, and neither
#     job slows down (< 1 %); jobs of one server each: nothing to place,
#     said so, exit 0; --workload with --te places its ring's 2 connections;
#     refused with exit 2 before any run: --te with --job-coll algo=tree or
#     algo=auto (NCCL's tree: not the ring's connections);
#   - no DPDK runtime directory is left behind.
# usage: test_jobs.sh ROCELAB_DP DATA_DIR
set -u
DP=$1 DATA=$(realpath "$2")
W="$DATA/workload-data4.txt"
SCHEMA=$(realpath "$DATA/../../../docs/reference/rocelab-dp.schema.json")
CHECK=$(dirname "$0")/jobs_json_check.py
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done
names=()

dp() { # NAME-SUFFIX ARGS...: one run with a unique --name and a timeout
  local name="rl-jobs-$$-$1"; shift
  names+=("$name" "$name-alone0" "$name-alone1")
  timeout 120 "$DP" --clock virtual --flows 0 --quiet --name "$name" --topology "$tmp/topo.yaml" "$@"
}
cp "$DATA/two-leaves-one-spine.yaml" "$tmp/topo.yaml"
jobs_file() { # POLICY: two jobs of 4 GPUs
  printf 'policy: %s\njobs:\n  - {name: a, workload: "astra:%s", gpus: 4}\n  - {name: b, workload: "astra:%s", gpus: 4}\n' \
    "$1" "$W" "$W"
}
# FILE JOB FIELD: from the job's "# jobs: NAME: ..." line, hosts | alone | mix | slowdown
field() {
  sed -n "s/^# jobs: $2: .* (\([-a-z0-9+]*\)), arrival .*: iteration 1 alone \([0-9.]*\) us, in the mix \([0-9.]*\) us, slowdown \([-0-9.]*\) %\$/\1 \2 \3 \4/p" "$1" |
    awk -v f="$3" '{ print f == "hosts" ? $1 : f == "alone" ? $2 : f == "mix" ? $3 : $4 }'
}
# HOSTS: a plain --workload run's iteration time on them
plain() {
  dp "plain-${1//+/}" --workload "astra:$W,hosts=$1" | awk '$2 == "job:" && $4 == "1:" { print $6 }'
}

jobs_file packed > "$tmp/packed.yaml"
# (--flows 4096 after dp's --flows 0: the last wins; the flows name each job's links)
dp packed --jobs "$tmp/packed.yaml" --jobs-svg "$tmp/p.svg" --flows 4096 --json "$tmp/packed.json" > "$tmp/packed.txt" 2>&1; rc=$?
ha=$(field "$tmp/packed.txt" a hosts) hb=$(field "$tmp/packed.txt" b hosts)
check "packed: exit 0 ($rc), a on h0+h1+h2+h3 ($ha), b on h4+h5+h6+h7 ($hb)" \
  "[ $rc -eq 0 ] && [ '$ha' = h0+h1+h2+h3 ] && [ '$hb' = h4+h5+h6+h7 ]"
for j in a b; do
  h=$(field "$tmp/packed.txt" $j hosts) alone=$(field "$tmp/packed.txt" $j alone) mix=$(field "$tmp/packed.txt" $j mix)
  want=$(plain "$h")
  check "packed: $j alone $alone us = a plain --workload run on $h ($want us)" "[ -n '$want' ] && [ '$alone' = '$want' ]"
  check "packed: $j shares no link: in the mix $mix us = alone, slowdown $(field "$tmp/packed.txt" $j slowdown) %" \
    "[ -n '$mix' ] && [ '$mix' = '$alone' ] && [ '$(field "$tmp/packed.txt" $j slowdown)' = 0.00 ]"
done
# FILE JOB: the first link of the job's "links most used" line
first_link() { sed -n "s/^# jobs: $2: links most used in the mix: \([^ ]*\) util .*/\1/p" "$1"; }
check "packed: a's links ($(first_link "$tmp/packed.txt" a) first), b's ($(first_link "$tmp/packed.txt" b)): no spine link" \
  "[ \$(grep -c '^# jobs: [ab]: links most used in the mix: h' $tmp/packed.txt) -eq 2 ] && ! grep '^# jobs: [ab]: links' $tmp/packed.txt | grep -q spine"
check "--jobs-svg: an SVG, h0-h3 held by a, h4-h7 by b" \
  "grep -q '<svg' $tmp/p.svg && [ \$(grep -c '<title>h[0-3]: a</title>' $tmp/p.svg) -eq 4 ] && [ \$(grep -c '<title>h[4-7]: b</title>' $tmp/p.svg) -eq 4 ]"

jobs_file spread > "$tmp/spread.yaml"
dp spread --jobs "$tmp/spread.yaml" --flows 4096 --json "$tmp/spread.json" > "$tmp/spread.txt" 2>&1; rc=$?
ha=$(field "$tmp/spread.txt" a hosts) hb=$(field "$tmp/spread.txt" b hosts)
check "spread: exit 0 ($rc), a on h0+h4+h1+h5 ($ha), b on h2+h6+h3+h7 ($hb)" \
  "[ $rc -eq 0 ] && [ '$ha' = h0+h4+h1+h5 ] && [ '$hb' = h2+h6+h3+h7 ]"
for j in a b; do
  h=$(field "$tmp/spread.txt" $j hosts) alone=$(field "$tmp/spread.txt" $j alone)
  s=$(field "$tmp/spread.txt" $j slowdown) want=$(plain "$h")
  check "spread: $j alone $alone us = a plain run's ($want us); sharing the uplink it slows down ($s %)" \
    "[ -n '$want' ] && [ '$alone' = '$want' ] && awk -v s='$s' 'BEGIN { exit !(s > 0) }'"
  l=$(first_link "$tmp/spread.txt" $j)
  check "spread: $j's link named first is an uplink's direction ($l)" \
    "case '$l' in leaf0\>spine0|spine0\>leaf0|leaf1\>spine0|spine0\>leaf1) true ;; *) false ;; esac"
done

# --jobs-mix-only: the same mix, no run alone (no alone process started), each job's
# time in the mix the same as with them, and the mix's iteration line their mean and max
dp mixonly --jobs "$tmp/spread.yaml" --jobs-mix-only --json "$tmp/mixonly.json" > "$tmp/mixonly.txt" 2>&1; rc=$?
ma=$(field "$tmp/spread.txt" a mix) mb=$(field "$tmp/spread.txt" b mix)
oa=$(sed -n 's/^# jobs: a: .*: iteration 1 alone not run, in the mix \([0-9.]*\) us$/\1/p' "$tmp/mixonly.txt")
ob=$(sed -n 's/^# jobs: b: .*: iteration 1 alone not run, in the mix \([0-9.]*\) us$/\1/p' "$tmp/mixonly.txt")
check "--jobs-mix-only: exit 0 ($rc), a $oa us and b $ob us in the mix, as with the runs alone ($ma, $mb)" \
  "[ $rc -eq 0 ] && [ -n '$oa' ] && [ '$oa' = '$ma' ] && [ '$ob' = '$mb' ]"
it=$(sed -n "s/^# jobs: the mix's iteration 1: 2 of 2 jobs ended, mean \([0-9.]*\) us, max \([0-9.]*\) us$/\1 \2/p" "$tmp/mixonly.txt")
check "--jobs-mix-only: the mix's iteration line ($it) is the mean and max of $oa and $ob; no slowdown line" \
  "awk -v a='$oa' -v b='$ob' -v it='$it' 'BEGIN { split(it, v, \" \"); m = a > b ? a : b;
     exit !(it != \"\" && (v[1] - (a + b) / 2)^2 < 1e-6 && v[2] == m) }' && ! grep -q '^# jobs: the mix: ' $tmp/mixonly.txt"
check "--jobs-mix-only: --json valid, alone_us and slowdown_pct null" "/usr/bin/python3 -c '
import json, sys, jsonschema
d = json.load(open(sys.argv[1])); jsonschema.validate(d, json.load(open(sys.argv[2])))
assert all(j[\"alone_us\"] is None and j[\"slowdown_pct\"] is None and j[\"mix_us\"] for j in d[\"mix\"][\"jobs\"])
assert d[\"mix\"][\"with_slowdown\"] == 0
' $tmp/mixonly.json '$SCHEMA'"
dp mixonly-bad --workload "astra:$W,hosts=h0+h1" --jobs-mix-only > "$tmp/mo-bad.txt" 2>&1; rc=$?
check "--jobs-mix-only without --jobs: exit 2 ($rc), said" "[ $rc -eq 2 ] && grep -q 'jobs-mix-only' $tmp/mo-bad.txt"

check "--json (spread): the schema's, and the text's numbers (jobs_json_check.py)" \
  "/usr/bin/python3 '$CHECK' '$SCHEMA' '$tmp/spread.json' '$tmp/spread.txt' > '$tmp/check.out'"
sa=$(field "$tmp/spread.txt" a slowdown) sb=$(field "$tmp/spread.txt" b slowdown)
check "--json (spread): mean of $sa and $sb, p99 and max the larger" "/usr/bin/python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))[\"mix\"]; a, b = float(sys.argv[2]), float(sys.argv[3])
assert m[\"count\"] == 2 and m[\"with_slowdown\"] == 2
assert abs(m[\"slowdown_mean_pct\"] - (a + b) / 2) < 0.01
assert abs(m[\"slowdown_p99_pct\"] - max(a, b)) < 0.005 and m[\"slowdown_max_pct\"] == m[\"slowdown_p99_pct\"]
' $tmp/spread.json $sa $sb"
check "--json (packed): each job's exposed communication share alone = in the mix (no shared link)" "/usr/bin/python3 -c '
import json, sys
for j in json.load(open(sys.argv[1]))[\"mix\"][\"jobs\"]:
    assert 0 < j[\"exposed_communication_alone_pct\"] < 100
    assert abs(j[\"exposed_communication_alone_pct\"] - j[\"exposed_communication_mix_pct\"]) < 1e-3, j
' $tmp/packed.json"

dp qps --jobs "$tmp/packed.yaml" --job-coll qps=4,mode=split > "$tmp/qps.txt" 2>&1; rc=$?
check "--job-coll qps=4,mode=split: exit 0 ($rc), every collective of the mix on 4 active QPs" \
  "[ $rc -eq 0 ] && [ \$(awk '\$1 == 1 && \$3 == \"ALL_REDUCE\" && \$9 == 4' $tmp/qps.txt | wc -l) -eq 4 ]"
check "--flows 0: the links are not tracked, each job's line says so" \
  "[ \$(grep -c 'links most used in the mix: none tracked (--flows 0' $tmp/qps.txt) -eq 2 ]"

# Two runs at once without --name: each child run's DPDK prefix is its parent's
# (rocelab-PID-aloneK), so neither finds the other's lock.
nn() { timeout 120 "$DP" --clock virtual --flows 0 --quiet --topology "$tmp/topo.yaml" --jobs "$tmp/packed.yaml"; }
nn > "$tmp/nn1.txt" 2>&1 & p1=$!
nn > "$tmp/nn2.txt" 2>&1 & p2=$!
wait $p1; rc1=$?; wait $p2; rc2=$?
names+=("rocelab-$p1" "rocelab-$p2")
check "two --jobs runs at once without --name: both exit 0 ($rc1, $rc2)" "[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]"

refused() { # NAME WANT ARGS...: exit 2 and stderr holding WANT
  local name=$1 want=$2; shift 2
  dp "$name" "$@" > /dev/null 2> "$tmp/$name.err"; local rc=$?
  check "refused: $name: exit 2 ($rc), '$want'" "[ $rc -eq 2 ] && grep -qF -- \"$want\" $tmp/$name.err"
}
printf 'jobs:\n  - {name: a, workload: "astra:%s", gpus: 4, gpu: 3}\n' "$W" > "$tmp/key.yaml"
refused key "$tmp/key.yaml:2: unknown job key 'gpu'" --jobs "$tmp/key.yaml"
printf 'jobs:\n  - {name: a, workload: "astra:%s", gpus: 4}\n  - {name: big, workload: "astra:%s", gpus: 8}\n' "$W" "$W" > "$tmp/fit.yaml"
refused no-fit "job big does not fit" --jobs "$tmp/fit.yaml"
printf 'jobs:\n  - {name: a, workload: "astra:%s", gpus: 4}\n  - {name: c, workload: "astra:%s/none.txt", gpus: 4}\n' "$W" "$tmp" > "$tmp/wl.yaml"
refused workload "$tmp/wl.yaml:3: job c: --workload: $tmp/none.txt" --jobs "$tmp/wl.yaml"
refused svg-alone "--jobs-svg draws the placement of --jobs" --jobs-svg "$tmp/x.svg"
refused with-workload "--jobs runs alone on the virtual clock" --jobs "$tmp/packed.yaml" --workload "astra:$W"

# --te on servers: the jobs' connections placed by the controller (dp_job_te_pairs)
SRV=$(realpath "$DATA/two-leaves-two-spines-servers.yaml")
dps() { local n=$1; shift; dp "$n" --topology "$SRV" --seed 1 --flows 4096 "$@"; } # (the last --topology wins)
dps te-ecmp --jobs "$tmp/spread.yaml" > "$tmp/te-ecmp.txt" 2>&1; rc=$?
la=$(first_link "$tmp/te-ecmp.txt" a) lb=$(first_link "$tmp/te-ecmp.txt" b)
sa=$(field "$tmp/te-ecmp.txt" a slowdown) sb=$(field "$tmp/te-ecmp.txt" b slowdown)
check "te, ECMP: exit 0 ($rc); both rings leave leaf0 on one uplink ($la, $lb); both slow down ($sa %, $sb %)" \
  "[ $rc -eq 0 ] && [ '$la' = '$lb' ] && case '$la' in leaf0\>spine*) true ;; *) false ;; esac && awk -v a='$sa' -v b='$sb' 'BEGIN { exit !(a > 10 && b > 10) }'"
# (--quiet off: the controller's lines are printed)
timeout 120 "$DP" --clock virtual --name "rl-jobs-$$-te" --topology "$SRV" --seed 1 --flows 4096 \
  --jobs "$tmp/spread.yaml" --te > "$tmp/te.txt" 2>&1; rc=$?
names+=("rl-jobs-$$-te" "rl-jobs-$$-te-alone0" "rl-jobs-$$-te-alone1")
grep '^te: ' "$tmp/te.txt" | sort > "$tmp/te.lines"
printf '%s\n' 's0-g1 > s2-g0' 's1-g1 > s3-g0' 's2-g1 > s0-g0' 's3-g1 > s1-g0' > "$tmp/te.want"
check "--te: exit 0 ($rc); the 4 network connections of the two rings placed, no NVLink pair ($(tr '\n' ';' < "$tmp/te.lines"))" \
  "[ $rc -eq 0 ] && sed 's/^te: \(.* > [^ ]*\) via spine.*/\1/' $tmp/te.lines | diff -q - $tmp/te.want > /dev/null"
port() { sed -n "s/^te: $1 > .* via spine[0-9]* (leaf[0-9]* port \([0-9]*\))\$/\1/p" "$tmp/te.txt"; }
check "--te: leaf0's two connections on disjoint uplinks (ports $(port s0-g1), $(port s1-g1)), leaf1's too ($(port s2-g1), $(port s3-g1))" \
  "[ -n '$(port s0-g1)' ] && [ -n '$(port s2-g1)' ] && [ '$(port s0-g1)' != '$(port s1-g1)' ] && [ '$(port s2-g1)' != '$(port s3-g1)' ]"
sa=$(field "$tmp/te.txt" a slowdown) sb=$(field "$tmp/te.txt" b slowdown)
check "--te: neither job slows down in the mix ($sa %, $sb %)" \
  "awk -v a='$sa' -v b='$sb' 'BEGIN { exit !(a != \"\" && b != \"\" && a < 1 && b < 1) }'"
printf 'policy: spread\njobs:\n  - {name: a, workload: "astra:%s", gpus: 2}\n  - {name: b, workload: "astra:%s", gpus: 2}\n' \
  "$W" "$W" > "$tmp/one-server.yaml"
timeout 120 "$DP" --clock virtual --name "rl-jobs-$$-te1" --topology "$SRV" --flows 0 \
  --jobs "$tmp/one-server.yaml" --te > "$tmp/te1.txt" 2>&1; rc=$?
names+=("rl-jobs-$$-te1" "rl-jobs-$$-te1-alone0" "rl-jobs-$$-te1-alone1")
check "--te, jobs of one server each: exit 0 ($rc), nothing to place, said so" \
  "[ $rc -eq 0 ] && grep -q '^te: no connection of the jobs crosses the fabric' $tmp/te1.txt && ! grep -q ' via spine' $tmp/te1.txt"
timeout 120 "$DP" --clock virtual --name "rl-jobs-$$-tew" --topology "$SRV" --flows 0 \
  --workload "astra:$W,hosts=s0-g0+s0-g1+s2-g0+s2-g1" --te > "$tmp/tew.txt" 2>&1; rc=$?
names+=("rl-jobs-$$-tew")
check "--workload --te: exit 0 ($rc), its ring's 2 network connections placed" \
  "[ $rc -eq 0 ] && [ \$(grep -c '^te: ' $tmp/tew.txt) -eq 2 ] && grep -q '^te: s0-g1 > s2-g0 via spine' $tmp/tew.txt && grep -q '^te: s2-g1 > s0-g0 via spine' $tmp/tew.txt"
refused te-tree "--te places a ring's connections; --job-coll algo=tree" --jobs "$tmp/spread.yaml" --te --job-coll algo=tree
refused te-auto "--te places a ring's connections; --job-coll algo=tree" --jobs "$tmp/spread.yaml" --te --job-coll algo=auto

check "no DPDK runtime directory left behind" "[ $(dpdk_left "${names[@]}") -eq 0 ]"
tap_done
