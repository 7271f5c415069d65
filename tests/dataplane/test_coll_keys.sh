#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The --coll language has one owner (nic_emul/ne_coll_keys.c): every key, with a good
# and a bad value, is accepted or refused alike on the command line
# (rocelab-dp --check --coll), in a traffic file (rocelab-dp --check --traffic) and in an
# experiment file (scripts/experiment.py's check before its runs). A refusal names
# the key, says what it takes (the expected text below), and, from a file, its
# FILE:LINE. The table must cover every key `rocelab-dp --coll help` prints, and
# docs/reference/coll.md must list each of them.
# usage: test_coll_keys.sh ROCELAB_DP SOURCE_ROOT
set -u
dp=$1 root=$(realpath "$2")
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"
topo=$root/experiments/clos-2x4x4-emulated.yaml
export PYTHONDONTWRITEBYTECODE=1

# KEY GOOD BAD WANTED-IN-THE-REFUSAL [KEYS-BEFORE]
table() {
  cat <<'T'
op alltoall all_reduce did_you_mean_allreduce
hosts h0+h1 h0+h99 'h99'
order hosts ring must_be_hosts_or_nccl
sizes 64K:1000KB 1000k bad_or_missing_unit
size 128K 0 needs_4_<=_MIN
model nccl mpi must_be_rocelab_or_nccl
qps 4 0 must_be_1..128
mode split roundrobin must_be_split,_rr_or_ctran
qp_mode rr x must_be_split,_rr_or_ctran
channels 2 65 must_be_1..64
chunk 64K 1002 multiple_of_4
window 1024 1025 must_be_1..1024
cts off maybe must_be_0_or_1
sport hash rss must_be_rxe,_mlx5,_fixed_or_hash
iters 3 0 must_be_1..1000000
warmup 2 1000001 must_be_0..1000000
warmup_iters 1 x not_an_unsigned_integer
data off yes must_be_0_or_1
inplace on yes must_be_0_or_1
proxy_post_wqe 200ns 200 missing_unit
proxy_poll_cqe 1us 2s at_most_1_s
series 10us 50ns at_least_100ns
launch nccl fast must_be_off,_nccl_or_a_time
release 2.23 2.28 unknown_release model=nccl
root 3 1024 must_be_0..1023
shift 3 0 must_be_1..1023 op=sendrecv
pairs 0>1+2>3 1>1 sends_to_itself op=sendrecv
algo tree star must_be_ring,_tree_or_auto
NCCL_ALGO Tree NVLS not_modelled model=nccl
NCCL_PROTO LL LL256 unknown_name model=nccl
NCCL_IB_QPS_PER_CONNECTION 16 129 must_be_1..128 model=nccl
NCCL_IB_SPLIT_DATA_ON_QPS 1 2 must_be_0_or_1 model=nccl
NCCL_BUFFSIZE 4M 4MB multiple_of_1024 model=nccl
NCCL_P2P_NET_CHUNKSIZE 128K 1000 multiple_of_128 model=nccl
NCCL_MIN_NCHANNELS 2 0 must_be_1..64 model=nccl
NCCL_MAX_NCHANNELS 4 65 must_be_1..64 model=nccl
NCCL_IB_TC 104 256 must_be_0..255 model=nccl
NCCL_IB_FIFO_TC 224 x not_an_unsigned_integer model=nccl
NCCL_IB_TIMEOUT 18 32 must_be_0..31 model=nccl
NCCL_CTRAN_IB_MAX_QPS 4 0 must_be_1..128 model=nccl
NCCL_CTRAN_IB_QP_SCALING_THRESHOLD 256K 100 multiple_of_128 model=nccl
NCCL_CTRAN_IB_QP_MAX_MSGS 64 70000 must_be_1..65535 model=nccl
T
}

# CHANNEL SPEC: "rc<TAB>message" of one way in, for op=allreduce plus SPEC (a traffic
# file writes hosts as a YAML list; the topology's loader checks those names)
cmdline() {
  local out rc=0
  out=$("$dp" --check --topology "$topo" --coll "op=allreduce,$1" 2>&1 >/dev/null) || rc=$?
  printf '%s\t%s\n' "$rc" "$out"
}
traffic() { # a collective entry on line 2 of a traffic file
  local f=$tmp/traffic.yaml out rc=0 pairs=() kv k v
  IFS=, read -ra kv <<< "$1"
  for p in "${kv[@]}"; do
    k=${p%%=*} v=${p#*=}
    [ "$k" = hosts ] && v="[${v//+/, }]" || v="\"$v\""
    pairs+=("$k: $v")
  done
  [[ ",$1" == *,op=* ]] || pairs=("op: allreduce" "${pairs[@]}")
  printf 'collectives:\n  - {%s}\n' "$(IFS=,; echo "${pairs[*]}" | sed 's/,/, /g')" > "$f"
  out=$("$dp" --check --topology "$topo" --traffic "$f" 2>&1 >/dev/null) || rc=$?
  printf '%s\t%s\n' "$rc" "$out"
}
experiment() { # the collective on line 3 of an experiment file, checked as before its runs
  local f=$tmp/exp.yaml out rc=0
  printf 'name: t\ntopology: %s\ncollective: "op=allreduce,%s"\nvariants:\n  - {label: a}\nbaseline: a\n' \
    "$topo" "$1" > "$f"
  out=$(/usr/bin/python3 - "$root/scripts" "$f" "$dp" 2>&1 <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import experiment as e
try:
    exp = e.load(sys.argv[2])
    e.check_colls(sys.argv[3], exp, exp["collective"])
except e.ExpError as x:
    print(x, file=sys.stderr)
    sys.exit(x.code)
PY
) || rc=$?
  printf '%s\t%s\n' "$rc" "$out"
}

# every key of the help is in the table, and in the reference page
help_keys=$("$dp" --coll help | awk '/^  [A-Za-z_]/ { print $1 }' | sort)
table_keys=$(table | awk '{ print $1 }' | sort)
check "the table covers every key of --coll help ($(wc -l <<< "$help_keys") keys)" \
  "[ -n \"$help_keys\" ] && [ \"$help_keys\" = \"$table_keys\" ]"
missing=$(for k in $help_keys; do grep -qF "\`$k\`" "$root/docs/reference/coll.md" || echo "$k"; done)
check "docs/reference/coll.md lists every key${missing:+ (missing: $missing)}" "[ -z \"$missing\" ]"

while read -r key good badv want pre; do
  want=${want//_/ }; want=${want//\'/}
  for kind in good bad; do
    v=$good; [ $kind = bad ] && v=$badv
    spec="${pre:+$pre,}$key=$v"
    [ "$key" = hosts ] || spec="hosts=h0+h1+h2+h3,$spec" # (hosts given apart: rows below test it)
    c=$(cmdline "$spec"); t=$(traffic "$spec")
    e=$([ "$key" = hosts ] && printf '%s\t%s' "${c%%$'\t'*}" "(placements)" || experiment "$spec")
    rcs="${c%%$'\t'*} ${t%%$'\t'*} ${e%%$'\t'*}"
    if [ $kind = good ]; then
      check "$key=$v accepted on the command line, in a traffic file, in an experiment file ($rcs)" \
        "[ '$rcs' = '0 0 0' ]"
    else
      check "$key=$v refused alike, exit 2 ($rcs)" "[ '$rcs' = '2 2 2' ]"
      says() { grep -qE -- "$key[=:]" <<< "$1" && grep -qF -- "$want" <<< "$1"; }
      check "$key=$v: each refusal names the key and says '$want'" \
        'says "$c" && says "$t" && { [ $key = hosts ] || says "$e"; }'
      check "$key=$v: the files' refusals give FILE:LINE" \
        'grep -qF "$tmp/traffic.yaml:2: " <<< "$t" && { [ $key = hosts ] || grep -qF "$tmp/exp.yaml:3: " <<< "$e"; }'
      [ $key = op ] && printf '# %s\n# %s\n# %s\n' "${c#*$'\t'}" "${t#*$'\t'}" "${e#*$'\t'}"
    fi
  done
done < <(table)

# an unknown key: refused alike, the nearest key and the keys listed
c=$(cmdline windw=4); t=$(traffic windw=4); e=$(experiment windw=4)
check "windw=4 refused alike with 'did you mean window?' and the keys" \
  "[ \"${c%%$'\t'*} ${t%%$'\t'*} ${e%%$'\t'*}\" = '2 2 2' ] && [ \$(printf '%s\n%s\n%s\n' \"\$c\" \"\$t\" \"\$e\" | grep -c 'did you mean window?); keys: op, hosts') -eq 3 ]"
tap_done
