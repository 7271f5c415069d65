#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The inputs on which the fuzzers found libfyaml failing (tests/fuzz/seeds/*/libfyaml-*),
# fed to the real readers: rocelab-topo --check (topology files) and rocelab-place --check
# (job files). Each must be refused with exit 2 and a first line "FILE:LINE: ...", never
# a crash, a hang or exit 0. The libfyaml-crash-* ones crash libfyaml 0.7.12 in
# fy_parser_destroy() (docs/dev/tests.md, "Fuzzing") unless topo_yaml_open() refuses them.
# Also: the refusal is no wider than it says (no '?' in the file: libfyaml reads it; a tab
# before a plain value: accepted).
# usage: test_libfyaml_inputs.sh SOURCE_ROOT ROCELAB_TOPO ROCELAB_PLACE
set -u
root=$(realpath "$1") topo=$2 place=$3
# (under ASan: libfyaml's own leak on the unterminated quote is known, as for the fuzzers)
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"

# refused PROG FILE: exit 2, first line FILE:LINE:, within 10 s
refused() {
  local rc=0 first
  timeout 10 "$1" --check "$2" > /dev/null 2> "$tmp/err" || rc=$?
  first=$(head -1 "$tmp/err")
  check "$(basename "$1") refuses $(basename "$2") with exit 2 (rc $rc): $first" \
    "[ $rc -eq 2 ] && [[ \"\$first\" =~ ^$2:[0-9]+:\ . ]]"
}

n=0
for f in "$root"/tests/fuzz/seeds/topology/libfyaml-* "$root"/tests/fuzz/seeds/wl_jobs/libfyaml-*; do
  refused "$topo" "$f"
  refused "$place" "$f"
  n=$((n + 1))
done
check "the seeds hold the libfyaml findings ($n files)" "[ $n -ge 8 ]"

# The crash's shape without a '?' anywhere: not the guard's refusal (libfyaml reads it).
printf 'jobs:\t|\n  x\n' > "$tmp/noq.yaml"
rc=0; timeout 10 "$place" --check "$tmp/noq.yaml" > /dev/null 2> "$tmp/err" || rc=$?
check "without '?', a tab before '|' reaches libfyaml (rc $rc): $(head -1 "$tmp/err")" \
  "[ $rc -eq 2 ] && ! grep -q 'crashes libfyaml' '$tmp/err'"
# A tab before a plain value, with '?' in a comment: accepted.
{ echo '# why? tabs'; sed 's/^name: default$/name:\tdefault/' "$root/topologies/default.yaml"; } \
  > "$tmp/tab.yaml"
check "the edit put a tab after 'name:'" "grep -q \$'^name:\\tdefault' '$tmp/tab.yaml'"
rc=0; timeout 10 "$topo" --check "$tmp/tab.yaml" > /dev/null 2> "$tmp/err" || rc=$?
check "a tab before a plain value is accepted (rc $rc)" "[ $rc -eq 0 ]"
tap_done
