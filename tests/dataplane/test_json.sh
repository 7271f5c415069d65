#!/usr/bin/env bash
# rocelab-dp --json FILE (issue 39, item 5): the document validates against
# docs/reference/rocelab-dp.schema.json and carries the numbers the text
# report of the same run prints (json_check.py compares every row of the
# link, switch and host tables, every nccl-tests line, the closing lines,
# the totals and latency lines, the run line and --version), for
#   - a virtual run with a generator (no collective: no totals);
#   - a collective sweep with data checked, one with its in-place pass, and one
#     with data=off (null / N/A);
#   - two collectives at once ([cK] lines, a totals line each);
#   - a live run on net_null hosts (as root, where DPDK can start);
# a document altered by one number is refused; a FILE that cannot be written
# is bad input (exit 2, named) before DPDK starts; --check writes no file; no
# DPDK runtime directory is left behind.
# usage: test_json.sh ROCELAB_DP DATA_DIR SOURCE_ROOT
set -u
DP=$1 DATA=$2 ROOT=$3
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done
SCHEMA="$ROOT/docs/reference/rocelab-dp.schema.json"
CHECK="$(dirname "$0")/json_check.py"
VERSION=$("$DP" --version)
names=()

dp() { # NAME-SUFFIX ARGS...: one run with a unique --name and a timeout, its text in $tmp/NAME.txt
  local tag=$1 name="rl-json-$$-$1"; shift
  names+=("$name")
  timeout 120 "$DP" --flows 0 --name "$name" --json "$tmp/$tag.json" "$@" > "$tmp/$tag.txt" 2> "$tmp/$tag.err"
}
same() { # TAG WHAT: the JSON of run TAG checked against its text
  local tag=$1 out rc
  out=$(/usr/bin/python3 "$CHECK" "$SCHEMA" "$tmp/$tag.json" "$tmp/$tag.txt" "$VERSION" 2>&1); rc=$?
  check "$2: valid, and equal to the text ($(tr '\n' ';' <<< "$out" | sed 's/ok - //g'))" "[ $rc -eq 0 ]"
}

dp gen --clock virtual --topology "$DATA/emulated.yaml" --gen 'h0>h4:size=1000,count=200' --gen 'h1>h5:size=4000,count=50'; rc=$?
check "virtual run with two generators: exit 0 ($rc)" "[ $rc -eq 0 ]"
same gen "virtual run"
check "virtual run: no collective, no totals" \
  "/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d[\"collectives\"] != [] or \"totals\" in d or d[\"run\"][\"clock\"] != \"virtual\")' $tmp/gen.json"

dp flows --clock virtual --topology "$DATA/emulated.yaml" --flows 64 --gen 'h0>h4:proto=roce,flows=4,count=40' --gen 'h1>h5:flows=2,count=10'; rc=$?
same flows "virtual run with the flow table (exit $rc)"
check "flow table: 6 flows with their paths, 2 generator lines" \
  "/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (len(d[\"flows\"][\"top\"]) == 6 and d[\"flows\"][\"tracked\"] == 6 and all(f[\"path\"] for f in d[\"flows\"][\"top\"]) and len(d[\"generators\"]) == 2))' $tmp/flows.json"

dp rdma --clock virtual --topology "$DATA/emulated.yaml" --rdma 'h0>h4:qps=2,size=64K,count=8'; rc=$?
same rdma "--rdma transfer (exit $rc)"
check "--rdma: one transfer, verified, and a NIC row per emulated host" \
  "/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (len(d[\"rdma\"]) == 1 and d[\"rdma\"][0][\"data\"] == \"verified\" and len(d[\"nics\"]) == 4))' $tmp/rdma.json"

dp coll --clock virtual --topology "$DATA/emulated.yaml" --coll 'op=allreduce,sizes=64K:256K,qps=2,mode=split,chunk=32K,data=on'; rc=$?
check "collective sweep: exit 0 ($rc)" "[ $rc -eq 0 ]"
same coll "collective, data=on"
check "collective: 3 sizes, 0 wrong, busbw = algbw x 2(n-1)/n at 4 ranks" \
  "/usr/bin/python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))[\"collectives\"][0]; z=c[\"sizes\"]
sys.exit(not (len(z) == 3 and c[\"out_of_bounds_elements\"] == 0 and all(abs(s[\"busbw_GBps\"] - 1.5 * s[\"algbw_GBps\"]) < 1e-9 for s in z)))' $tmp/coll.json"

dp inplace --clock virtual --topology "$DATA/emulated.yaml" --coll 'op=allgather,sizes=64K:128K,data=on,inplace=on'; rc=$?
same inplace "collective, inplace=on (exit $rc)"
check "inplace=on: each size's in-place half measured and checked; the average over the four halves" \
  "/usr/bin/python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))[\"collectives\"][0]; z=c[\"sizes\"]
b=[s[\"busbw_GBps\"] for s in z] + [s[\"in_place\"][\"busbw_GBps\"] for s in z]
sys.exit(not (len(z) == 2 and all(s[\"in_place\"][\"wrong_elements\"] == 0 and s[\"in_place\"][\"time_us\"] > 0 for s in z) and abs(c[\"avg_busbw_GBps\"] - sum(b) / 4) < 1e-9))' $tmp/inplace.json"

# stopped between the passes (--duration 5 us past the out-of-place pass's time; the
# collective starts at 0, the in-place pass 10 us after the first ended): the line
# still comes out, its in-place half N/A, the JSON the same
t=$(awk '$1 == 65536 { print int($6) + 5; exit }' "$tmp/inplace.txt")
dp stopped --clock virtual --topology "$DATA/emulated.yaml" --duration "${t:-0}us" --coll 'op=allgather,sizes=64K:128K,data=on,inplace=on'
same stopped "collective stopped between its passes at ${t}us"
check "stopped between its passes: one line, measured out of place, N/A in place, its comment lines after it" \
  "[ \$(grep -Ec '^ +65536 .* 0 +N/A +N/A +N/A +N/A\$' $tmp/stopped.txt) = 1 ] && grep -A1 -E '^ +65536 ' $tmp/stopped.txt | grep -q '^# active QPs'"

dp off --clock virtual --topology "$DATA/emulated.yaml" --coll 'op=alltoall,sizes=64K,data=off'; rc=$?
same off "collective, data=off (exit $rc)"
check "data=off: wrong and out-of-bounds are null, the text's N/A" \
  "/usr/bin/python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))[\"collectives\"][0]; sys.exit(not (c[\"out_of_bounds_elements\"] is None and c[\"sizes\"][0][\"wrong_elements\"] is None))' $tmp/off.json &&
   grep -q '^# Out of bounds values : N/A' $tmp/off.txt"

dp two --clock virtual --topology "$DATA/emulated.yaml" --coll 'op=allreduce,hosts=h0+h4,sizes=64K:128K' --coll 'op=allgather,hosts=h1+h5,sizes=64K'; rc=$?
same two "two collectives at once (exit $rc)"
check "two collectives: [cK] lines, a totals object each" \
  "grep -q '^\[c2\] ' $tmp/two.txt && /usr/bin/python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))[\"collectives\"]; sys.exit(not (len(c) == 2 and all(\"totals\" in x for x in c)))' $tmp/two.json"

# the checker itself: one number changed is a mismatch (a busbw, a NIC's counter)
/usr/bin/python3 - "$tmp/coll.json" "$tmp/bad.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["collectives"][0]["sizes"][1]["busbw_GBps"] += 0.05
json.dump(d, open(sys.argv[2], "w"))
d["collectives"][0]["sizes"][1]["busbw_GBps"] -= 0.05
d["nics"][2]["sent_packets"] += 1
json.dump(d, open(sys.argv[2].replace("bad", "bad2"), "w"))
EOF
cp "$tmp/coll.txt" "$tmp/bad.txt"
/usr/bin/python3 "$CHECK" "$SCHEMA" "$tmp/bad.json" "$tmp/bad.txt" > "$tmp/bad.out" 2>&1; rc=$?
check "a document with one busbw changed by 0.05 GB/s is a mismatch (exit $rc)" "[ $rc -eq 1 ] && grep -q 'mismatch.*busbw' $tmp/bad.out"
/usr/bin/python3 "$CHECK" "$SCHEMA" "$tmp/bad2.json" "$tmp/bad.txt" > "$tmp/bad2.out" 2>&1; rc=$?
check "a document with one NIC's sent packets changed by 1 is a mismatch (exit $rc)" "[ $rc -eq 1 ] && grep -q 'mismatch.*nic h4' $tmp/bad2.out"

if [ "$(id -u)" -eq 0 ]; then
  dp live --clock live --topology "$ROOT/tests/bench/null-2x2.yaml" --duration 200ms --gen 'h0>h4:size=1000,rate=1G,count=1000'; rc=$?
  same live "live run on net_null hosts (exit $rc)"
  check "live run: the lag is recorded" \
    "/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[\"run\"]; sys.exit(not (r[\"clock\"] == \"live\" and \"lag_max_ms\" in r))' $tmp/live.json"
else
  echo "# live run skipped: DPDK's live clock here needs root"
fi

"$DP" --clock virtual --topology "$DATA/emulated.yaml" --name "rl-json-$$-bad" --json "$tmp/no/such/dir.json" > /dev/null 2> "$tmp/badpath.err"; rc=$?
names+=("rl-json-$$-bad")
check "--json to a folder that does not exist: exit 2, the file named ($(head -1 "$tmp/badpath.err"))" \
  "[ $rc -eq 2 ] && grep -q -- '--json $tmp/no/such/dir.json: cannot write' $tmp/badpath.err"
"$DP" --check --topology "$DATA/emulated.yaml" --json "$tmp/check.json" > /dev/null 2>&1; rc=$?
check "--check with --json: exit 0 ($rc), no file written" "[ $rc -eq 0 ] && [ ! -e $tmp/check.json ]"

left=$(dpdk_left "${names[@]}")
check "no DPDK runtime directory left behind ($left)" "[ $left -eq 0 ]"
tap_done
