#!/usr/bin/env bash
# Every long option that a program's --help prints appears in its man page
# (issue 39: the man pages list every option). The pages are made by pandoc from
# docs/reference (packaging/man/meson.build), so this also keeps the reference
# pages complete.
#   test_man.sh MANDIR NAME=PROGRAM...
# MANDIR holds the built NAME.1 pages; PROGRAM is run with --help (a .py file with
# /usr/bin/python3). The page is rendered by man(1) as plain ASCII text, so an
# option counts only where a reader sees it. First it checks that the check can
# fail: a page with one option taken out must be reported.
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[ $# -ge 2 ] || { echo "usage: test_man.sh MANDIR NAME=PROGRAM..." >&2; exit 2; }
mandir=$1; shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# render PAGE: the page as one long-lined ASCII text (no hyphenation, no wrapping
# inside an option); man-db reads roff from a file with -l
render() {
  MANWIDTH=400 MAN_KEEP_FORMATTING= man -l -E ascii "$1" 2>/dev/null | col -bx
}

# missing PROG PAGE_TEXT: the long options of PROG --help not in PAGE_TEXT
missing() {
  local prog=$1 text=$2 help opt
  if [[ $prog == *.py ]]; then help=$(/usr/bin/python3 "$prog" --help 2>&1)
  else help=$("$prog" --help 2>&1); fi
  for opt in $(grep -oE -- '--[a-z][a-z0-9-]*' <<< "$help" | sort -u); do
    grep -qE -- "(^|[^a-z0-9-])$opt([^a-z0-9-]|\$)" "$text" || echo "$opt"
  done
}

fail=0
checked=0
for arg in "$@"; do
  name=${arg%%=*} prog=${arg#*=}
  page=$mandir/$name.1
  [ -f "$page" ] || { echo "FAIL: $name: no man page $page"; fail=1; continue; }
  render "$page" > "$tmp/$name.txt"
  [ -s "$tmp/$name.txt" ] || { echo "FAIL: $name: man -l $page printed nothing"; fail=1; continue; }
  gone=$(missing "$prog" "$tmp/$name.txt")
  if [ -n "$gone" ]; then
    echo "FAIL: $name: --help options missing from $page:" $gone
    fail=1
  else
    n=$(missing "$prog" /dev/null | wc -l)
    echo "ok: $name: all $n long options of --help are in its man page"
    checked=$((checked + 1))
  fi
  # the check itself: with the page's first option taken out, it must be found missing
  if [ $checked -eq 1 ] && [ -z "${self_tested:-}" ]; then
    self_tested=1
    all=$(missing "$prog" /dev/null)
    first=${all%%$'\n'*}
    grep -vE -- "(^|[^a-z0-9-])$first([^a-z0-9-]|\$)" "$tmp/$name.txt" > "$tmp/cut.txt" || true
    if ! grep -qx -- "$first" <<< "$(missing "$prog" "$tmp/cut.txt")"; then
      echo "FAIL: the check does not notice $first taken out of $name's page"
      fail=1
    else
      echo "ok: the check notices $first taken out of $name's page"
    fi
  fi
done
exit $fail
