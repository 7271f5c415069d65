#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rocelab-llm's command line: --help, --version, bad options and specs (exit 2,
# one line naming what is wrong, nothing on stdout), a listing whose lines are
# the nodes worked out by hand, --check, and a listing it cannot write (exit 1).
# usage: test_llm_cli.sh ROCELAB_LLM
set -u
llm=$1
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"

# run ARGS...: exit status in $rc, stdout in $tmp/out, stderr in $tmp/err
run() { rc=0; timeout 60 "$llm" "$@" > "$tmp/out" 2> "$tmp/err" < /dev/null || rc=$?; }

for a in --help -h; do
  run "$a"
  check "$a: exit 0, usage on stdout, nothing on stderr" \
    "[ $rc -eq 0 ] && grep -q '^usage: rocelab-llm' '$tmp/out' && [ ! -s '$tmp/err' ]"
done
run --version
check "--version: 'rocelab-llm X.Y.Z (commit C)'" \
  "[ $rc -eq 0 ] && grep -Eq '^rocelab-llm [0-9]+\.[0-9]+\.[0-9]+ \(commit [^)]+\)$' '$tmp/out'"
run --presets
check "--presets: the 4 presets" \
  "[ $rc -eq 0 ] && [ \$(grep -c -E '^(llama3-(8b|70b|405b)|mixtral-8x7b) ' '$tmp/out') -eq 4 ]"

# N ARGS... WORDS...: the N arguments, then the words the one line on stderr
# must hold (without single quotes)
refused() {
  local n=$1; shift
  local args=("${@:1:$n}") words=("${@:$((n + 1))}")
  run "${args[@]}"
  local cond="[ $rc -eq 2 ] && [ ! -s '$tmp/out' ] && [ \$(wc -l < '$tmp/err') -eq 1 ]"
  for w in "${words[@]}"; do cond+=" && grep -qF -- '$w' '$tmp/err'"; done
  check "${args[*]}: exit 2 ($rc), one line naming ${words[*]}" "$cond"
  [ "$rc" -eq 2 ] || sed 's/^/# /' "$tmp/err"
}
refused 1 --no-such-option-x "--no-such-option-x"
refused 1 tpp=2 "unknown key" "tpp" "did you mean tp?"
refused 1 preset=llama4 "bad preset=llama4"
refused 1 tp=3 "heads=32" "tp=3"
refused 1 mfu=0 "bad mfu=0"
refused 0 "takes one SPEC"
refused 2 tp=1 tp=2 "takes one SPEC"
refused 3 --rank 8 tp=8 "--rank 8" "0..7"
refused 3 --rank x tp=8 "--rank takes a rank number" "x"

# Stage 0 and 3 of pp 4, m 8, one layer a stage: 8 forwards, 8 backwards, 8
# sends and 8 receives: 32 nodes; stages 1 and 2 send and receive both ways:
# 48. The first rank of each stage is shown: ranks 0..3, 160 lines.
spec=preset=llama3-8b,layers=4,seq=512,pp=4,gbs=8
run --list "$tmp/list" "$spec"
check "--list: exit 0 ($rc), 160 nodes" "[ $rc -eq 0 ] && [ \$(wc -l < '$tmp/list') -eq 160 ]"
check "--list: rank 1 has 48 nodes, 16 SEND" \
  "[ \$(grep -c '^1 ' '$tmp/list') -eq 48 ] && [ \$(grep -c '^1 [0-9]* SEND' '$tmp/list') -eq 16 ]"
check "the summary of rank 0: 16 computes, 8 SEND, 8 RECV" \
  "grep -q '^rank 0 stage 0: nodes compute=16 SEND=8 RECV=8; ' '$tmp/out'"
run --check "preset=mixtral-8x7b,seq=256,tp=2,pp=2,dp=4,ep=2,gbs=8"
check "--check: a MoE job of 16 ranks passes" \
  "[ $rc -eq 0 ] && grep -q '^check: 16 ranks, .* passes wl_graph_check' '$tmp/out'"
run --list "$tmp/no-such-dir/list" "$spec"
check "--list into a missing folder: exit 1 ($rc), the path named" \
  "[ $rc -eq 1 ] && grep -qF '$tmp/no-such-dir/list' '$tmp/err'"
tap_done
