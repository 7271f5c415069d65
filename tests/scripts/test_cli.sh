#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 39, "fail fast, fail kindly": every script under scripts/ (and tools/rocelab-viz)
# and every program given answers --help and -h with its usage on stdout, exit 0,
# nothing on stderr; and refuses an unknown option with one line on stderr that names
# it, exit 2, nothing on stdout. Neither changes the tree: no build, no install, no
# results (git status and every file's mtime, before and after).
# usage: test_cli.sh SOURCE_ROOT PART [PROGRAM...]
#   PART: top (scripts/*) or rxe (scripts/rxe/* and tools/rocelab-viz): two tests of
#   half a minute each on a loaded machine
set -u
root=$(realpath "$1") part=$2
shift 2
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"
# Python's bytecode caches are not the scripts' work; keep them out of the tree's state
export PYTHONDONTWRITEBYTECODE=1
BOGUS=--no-such-option-x

# git status where the tree is a checkout (CI tests an exported copy: mtimes only)
status() { git -C "$root" rev-parse 2> /dev/null && git -C "$root" status --porcelain --untracked-files=all; }

snap() { # FILE: the tree's state: git status and every file's mtime and size
  { status
    find "$root" \( -name .git -o -name meson-logs -o -name meson-private \) -prune -o \
      -printf '%T@ %s %p\n' | sort; } > "$1"
}

newer() { # the files written since $tmp/stamp, and git status if it moved from the start's
  find "$root" \( -name .git -o -name meson-logs -o -name meson-private \) -prune -o \
    -newer "$tmp/stamp" -print
  status | diff - "$tmp/status0" >&2
}

runner() { # FILE: the interpreter its first line names (none: bash, a sourced library)
  case $(head -n 1 "$1") in
    *python*) echo /usr/bin/python3 ;;
    '#!/bin/sh'*) echo sh ;;
    *) echo bash ;;
  esac
}

# NAME CMD...: --help, -h and an unknown option; then no file in the tree newer than
# before them, git status as it was (the whole tree's listing is compared at the end)
probe() {
  local name=$1 a rc
  shift
  touch "$tmp/stamp"
  sleep 0.01  # a file written now is newer than the stamp, whatever the clock's grain
  for a in --help -h; do
    rc=0; timeout 30 "$@" "$a" > "$tmp/out" 2> "$tmp/err" < /dev/null || rc=$?
    check "$name $a: exit 0 ($rc), usage on stdout, nothing on stderr" \
      "[ $rc -eq 0 ] && [ -s '$tmp/out' ] && [ ! -s '$tmp/err' ]"
  done
  rc=0; timeout 30 "$@" "$BOGUS" > "$tmp/out" 2> "$tmp/err" < /dev/null || rc=$?
  check "$name $BOGUS: exit 2 ($rc), one line naming it, nothing on stdout" \
    "[ $rc -eq 2 ] && [ \$(wc -l < '$tmp/err') -eq 1 ] && grep -q -- '$BOGUS' '$tmp/err' && [ ! -s '$tmp/out' ]"
  [ "$rc" -eq 2 ] || sed 's/^/# /' "$tmp/err" | head -5
  newer > "$tmp/changed" 2>&1
  check "$name: --help, -h and $BOGUS leave the tree unchanged" "[ ! -s '$tmp/changed' ]"
  head -5 "$tmp/changed" | sed 's/^/# /'
}

snap "$tmp/tree0"
status > "$tmp/status0"
for p in "$@"; do
  probe "$(basename "$p")" "$p"
  # a program also says its version and commit: "NAME VERSION (commit C)", exit 0
  rc=0; v=$(timeout 30 "$p" --version 2>&1) || rc=$?
  check "$(basename "$p") --version: exit 0 ($rc), '$v'" \
    "[ $rc -eq 0 ] && [[ \"\$v\" =~ ^$(basename "$p")\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ [^\)]+\)$ ]]"
done
# every script: shell scripts, Python programs (a module without a main is none)
while read -r f; do
  case $f in
    */lib/*) continue ;;
    *.py) grep -q '__main__' "$f" || continue ;;
  esac
  probe "${f#"$root"/}" "$(runner "$f")" "$f"
done < <(if [ "$part" = rxe ]; then
           find "$root/scripts/rxe" -type f; echo "$root/tools/rocelab-viz"
         else
           find "$root/scripts" -maxdepth 1 -type f \( -name '*.sh' -o -name '*.py' \)
         fi | sort)
snap "$tmp/tree1"
check "the whole tree (git status, every file's mtime) is as before" "cmp -s '$tmp/tree0' '$tmp/tree1'"
tap_done
