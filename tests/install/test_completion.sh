#!/usr/bin/env bash
# The bash completion (packaging/completion/rocelab.bash) completes options from
# each program's --help and rocelab-dp's KEY=VALUE words from `--coll help` and the
# like, as bash would: the test sets COMP_LINE, COMP_WORDS and COMP_CWORD the way
# bash splits a line (at spaces and at = : >) and calls the completion function.
#   test_completion.sh SRCROOT ROCELAB-DP ROCELAB-TOPO
set -uo pipefail  # no -e: completion functions end on a test that may be false
[ "${1:-}" = --help ] && { sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[ $# -eq 3 ] || { echo "usage: test_completion.sh SRCROOT ROCELAB-DP ROCELAB-TOPO" >&2; exit 2; }
src=$(cd "$1" && pwd) dp=$2 topo=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=/dev/null
. "$src/packaging/completion/rocelab.bash"
# the experiment command as installed: bin/rocelab-experiment, a link to an executable
# experiment.py in scripts/, with experiments/ and tools/ beside (packaging/meson.build)
mkdir "$tmp/scripts" "$tmp/bin"
cp "$src"/scripts/*.py "$tmp/scripts/"
chmod +x "$tmp/scripts/experiment.py"
ln -s "$src/experiments" "$src/tools" "$tmp/"
ln -s ../scripts/experiment.py "$tmp/bin/rocelab-experiment"

# complete PROG LINE: COMPREPLY for the line PROG LINE with the cursor at its end
complete_line() {
  COMP_LINE="$1 $2"
  COMP_POINT=${#COMP_LINE}
  read -r -a COMP_WORDS <<< "$1 ${2//[=:>]/ & }"
  local tok=${COMP_LINE##* }
  if [[ $tok == *[=:\>] ]]; then COMP_WORDS+=("${tok: -1}"); fi
  [[ $COMP_LINE == *' ' ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  # the current word is what follows the last break, as bash has it (',' is no break)
  COMP_WORDS[COMP_CWORD]=${tok##*[=:>]}
  [[ $tok == *[=:\>] ]] && COMP_WORDS[COMP_CWORD]=${tok: -1}
  COMPREPLY=()
  _rocelab
}

fail=0
# expect PROG LINE WORD: WORD is among the completions of LINE
expect() {
  complete_line "$1" "$2"
  local w
  for w in "${COMPREPLY[@]}"; do [ "$w" = "$3" ] && { echo "ok: '${1##*/} $2' offers '$3'"; return; }; done
  echo "FAIL: '${1##*/} $2' offers (${COMPREPLY[*]}), not '$3'"
  fail=1
}
# expect_none PROG LINE: no completion
expect_none() {
  complete_line "$1" "$2"
  if [ ${#COMPREPLY[@]} -eq 0 ]; then echo "ok: '${1##*/} $2' offers nothing"
  else echo "FAIL: '${1##*/} $2' offers (${COMPREPLY[*]}), expected nothing"; fail=1; fi
}

expect "$dp" "--top" "--topology"
expect "$dp" "--topology x.yaml --coll-s" "--coll-series"
expect "$dp" "--coll op=allr" "allreduce"
expect "$dp" "--coll op=allreduce,mo" "allreduce,mode="
expect "$dp" "--coll op=allreduce,mode=" "split"
expect "$dp" "--coll he" "help"
expect "$dp" "--gen h0>h4:pro" "proto="
expect "$dp" "--rdma e0>e1:qp" "qps="
expect "$dp" "--nic qu" "quantum="
expect_none "$dp" "--coll op=zz"
expect_none "$dp" "--gen pro"
expect "$topo" "--gen" "--generate"
expect "$tmp/bin/rocelab-experiment" "--smo" "--smoke"
expect "$tmp/bin/rocelab-experiment" "e1-eecmp-qp" "e1-eecmp-qp-scaling"
exit $fail
