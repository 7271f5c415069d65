#!/usr/bin/env bash
# The .deb (issue 39, item 7): scripts/build-deb.sh builds it, and it installs into a
# clean root, where rocelab-dp --version, rocelab-experiment --help, a smoke run of
# a shipped experiment and the man page work. The clean root is an overlay over /
# with a tmpfs upper layer, in a private mount namespace (unshare --mount): dpkg -i
# inside it checks the package's Depends against the host's installed packages and
# writes only to the tmpfs, which goes away with the namespace. Needs root; skipped
# (77) where a mount namespace cannot be made.
#   test_deb.sh SRCROOT BUILDDIR
# The package is built from BUILDDIR itself when its prefix is /usr (scripts/test.sh
# sets up its plain build so), else in BUILDDIR/deb-usr (--prefix=/usr), kept between
# runs: the first run there builds the whole tree again, later ones only what changed.
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[ $# -eq 2 ] || { echo "usage: test_deb.sh SRCROOT BUILDDIR" >&2; exit 2; }
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
if [ "$(id -u)" -ne 0 ] || ! unshare --mount true 2>/dev/null; then
  echo "SKIP: needs root and unshare --mount"; exit 77
fi
if [ "$(findmnt -n -o TARGET --target /usr)" != / ]; then
  echo "SKIP: /usr is a mount of its own; an overlay of / would not hold it"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

debbuild=$build/deb-usr
prefix=$(meson introspect "$build" --buildoptions |
  /usr/bin/python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
[ "$prefix" = /usr ] && debbuild=$build
deb=$("$src/scripts/build-deb.sh" --builddir "$debbuild" --out "$tmp")
echo "ok: built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
fail=0
depends=$(dpkg-deb --field "$deb" Depends)
for want in libc6 'librte-' libfyaml python3-yaml; do
  if [[ $depends == *"$want"* ]]; then echo "ok: Depends has $want"
  else echo "FAIL: Depends lacks $want: $depends"; fail=1; fi
done
dpkg-deb --contents "$deb" > "$tmp/contents"
for f in usr/bin/rocelab-dp usr/bin/rocelab-experiment usr/share/man/man1/rocelab-dp.1.gz \
         usr/share/rocelab/experiments/e1-eecmp-qp-scaling.yaml; do
  if grep -q " \./$f\( \|$\)" "$tmp/contents"; then echo "ok: the package holds /$f"
  else echo "FAIL: the package lacks /$f"; fail=1; fi
done

mkdir "$tmp/ovl"
# the clean root: nothing of rocelab before dpkg -i, every command there after it
unshare --mount bash -s "$tmp/ovl" "$deb" <<'INNER' || fail=1
set -euo pipefail
o=$1 deb=$2
mount --make-rprivate /
mount -t tmpfs tmpfs "$o"
mkdir "$o/upper" "$o/work" "$o/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$o/upper,workdir=$o/work" "$o/root"
r=$o/root
mount -t proc proc "$r/proc"
mount --rbind /dev "$r/dev"
mount --rbind /sys "$r/sys"
cp "$deb" "$r/rocelab.deb"
in_root() { chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
if in_root sh -c 'command -v rocelab-dp rocelab-experiment'; then
  echo "FAIL: the root is not clean: rocelab is there before dpkg -i"; exit 1
fi
in_root dpkg -i /rocelab.deb > "$o/dpkg.log" 2>&1 || { cat "$o/dpkg.log"; echo "FAIL: dpkg -i"; exit 1; }
echo "ok: dpkg -i rocelab.deb in the clean root"
v=$(in_root rocelab-dp --version) || { echo "FAIL: rocelab-dp --version"; exit 1; }
echo "ok: rocelab-dp --version there: $v"
in_root rocelab-experiment --help > /dev/null || { echo "FAIL: rocelab-experiment --help"; exit 1; }
echo "ok: rocelab-experiment --help there"
mkdir "$r/run-here"
if in_root sh -c 'cd /run-here && rocelab-experiment e1-eecmp-qp-scaling --smoke --no-pictures' \
     > "$o/smoke.log" 2>&1 && [ -s "$r/run-here/results/e1-eecmp-qp-scaling/results.csv" ]; then
  echo "ok: rocelab-experiment e1-eecmp-qp-scaling --smoke there (the installed rocelab-dp, results/ here)"
else
  cat "$o/smoke.log"; echo "FAIL: the smoke run in the clean root"; exit 1
fi
page=$(in_root man -w rocelab-dp) || { echo "FAIL: man -w rocelab-dp"; exit 1; }
echo "ok: man -w rocelab-dp there: $page"
INNER
exit $fail
