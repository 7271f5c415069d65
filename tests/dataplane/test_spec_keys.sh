#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The --gen and --rdma languages each have one owner (the key tables of
# dataplane/hosts/dp_gen.c and dp_rdma.c): every key, with a good and a bad value,
# is accepted or refused alike on the command line (rocelab-dp --check --gen/--rdma)
# and in a traffic file (rocelab-dp --check --traffic). A refusal names the pair and
# what the key takes; from the file, with its FILE:LINE. The table must cover every
# key that `rocelab-dp --gen help` and `--rdma help` print.
# usage: test_spec_keys.sh ROCELAB_DP SOURCE_ROOT
set -u
dp=$1 root=$(realpath "$2")
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"
topo=$root/experiments/clos-2x4x4-emulated.yaml

# KIND KEY GOOD BAD WANTED-IN-THE-REFUSAL
table() {
  cat <<'T'
gen proto roce tcp takes_udp|roce|pfc
gen flows 16 0 takes_1..1048576
gen sport vary -1 takes_0..65535_|_vary
gen size 1078 10 takes_64..9216
gen rate 40G fast takes_RATE
gen count 3000 x takes_N
gen start 1ms soon takes_TIME
gen dscp 26 64 takes_0..63
gen ttl 3 0 takes_1..255
rdma qps 4 65 takes_1..64
rdma size 64K 257M takes_SIZE,_1..256M
rdma count 32 0 takes_1..100000000
rdma depth 8 129 takes_1..128
rdma mtu 1024 1000 takes_256|512|1024|2048|4096
rdma dscp 26 64 takes_0..63
rdma sport hash rss takes_rxe|mlx5|fixed|hash
rdma start 2us 2 takes_TIME
T
}

# KIND PAIR: "rc<TAB>message" on the command line, then in a traffic file (entry on line 2)
cmdline() {
  local out rc=0
  out=$("$dp" --check --topology "$topo" "--$1" "h0>h1:$2" 2>&1 >/dev/null) || rc=$?
  printf '%s\t%s\n' "$rc" "$out"
}
traffic() {
  local f=$tmp/traffic.yaml out rc=0 section=generators
  [ "$1" = rdma ] && section=rdma
  printf '%s:\n  - {src: h0, dst: h1, %s: "%s"}\n' "$section" "${2%%=*}" "${2#*=}" > "$f"
  out=$("$dp" --check --topology "$topo" --traffic "$f" 2>&1 >/dev/null) || rc=$?
  printf '%s\t%s\n' "$rc" "$out"
}

for kind in gen rdma; do
  help_keys=$("$dp" "--$kind" help | awk '/^  [a-z]/ { print $1 }' | sort)
  table_keys=$(table | awk -v k=$kind '$1 == k { print $2 }' | sort)
  check "--$kind: the table covers every key of --$kind help ($(wc -l <<< "$help_keys") keys)" \
    "[ -n \"$help_keys\" ] && [ \"$help_keys\" = \"$table_keys\" ]"
done

while read -r kind key good badv want; do
  want=${want//_/ }
  c=$(cmdline "$kind" "$key=$good"); t=$(traffic "$kind" "$key=$good")
  check "--$kind $key=$good accepted on the command line and in a traffic file (${c%%$'\t'*} ${t%%$'\t'*})" \
    "[ '${c%%$'\t'*} ${t%%$'\t'*}' = '0 0' ]"
  c=$(cmdline "$kind" "$key=$badv"); t=$(traffic "$kind" "$key=$badv")
  check "--$kind $key=$badv refused alike, exit 2 (${c%%$'\t'*} ${t%%$'\t'*})" \
    "[ '${c%%$'\t'*} ${t%%$'\t'*}' = '2 2' ]"
  says() { grep -qF -- "bad $key=$badv: $want" <<< "$1"; }
  check "--$kind $key=$badv: both say 'bad $key=$badv: $want', the file with FILE:LINE" \
    'says "$c" && says "$t" && grep -qF "$tmp/traffic.yaml:2: " <<< "$t"'
done < <(table)

# an unknown key: the nearest and the keys listed, alike
for kind in gen rdma; do
  c=$(cmdline $kind cont=4); t=$(traffic $kind cont=4)
  check "--$kind cont=4 refused alike with 'did you mean count?' and the keys" \
    "[ \"${c%%$'\t'*} ${t%%$'\t'*}\" = '2 2' ] && [ \$(printf '%s\n%s\n' \"\$c\" \"\$t\" | grep -c 'unknown key (did you mean count?); keys: ') -eq 2 ]"
done
tap_done
