#!/usr/bin/env bash
# Build a Debian package of rocelab from this tree: meson with --prefix=/usr,
# meson install into a staging directory, a DEBIAN/control whose Depends
# dpkg-shlibdeps finds from the programs' shared libraries (plus the Python
# modules the commands import), then dpkg-deb --build.
#   scripts/build-deb.sh [--builddir DIR] [--out DIR]
#   --builddir DIR  the meson build directory to use (default build-deb); made with
#                   --prefix=/usr when missing, reused (incremental) when it exists;
#                   one with another prefix is refused (exit 2)
#   --out DIR       where rocelab_VERSION_ARCH.deb goes (default: the current directory)
# Prints the .deb's path. Exit status: 0; 2 for bad arguments; 1 when a step fails.
# Install it with `apt install ./rocelab_VERSION_ARCH.deb` (docs/howto/install.md).
set -euo pipefail
. "$(dirname "$0")/lib/cli.sh"
src=$(cd "$(dirname "$0")/.." && pwd)
builddir=$src/build-deb out=$PWD
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) cli_usage "$0"; exit 0 ;;
    --builddir|--out)
      [ $# -ge 2 ] || { echo "build-deb.sh: $1 needs a directory" >&2; exit 2; }
      if [ "$1" = --builddir ]; then builddir=$2; else out=$2; fi
      shift 2 ;;
    *) cli_unknown "$0" "$1" ;;
  esac
done
[ -d "$out" ] || { echo "build-deb.sh: --out $out: no such directory" >&2; exit 2; }
out=$(cd "$out" && pwd)
for t in meson ninja dpkg-deb dpkg-shlibdeps pandoc; do  # pandoc: the man pages
  command -v "$t" >/dev/null || { echo "build-deb.sh: $t not found (scripts/install-deps.sh)" >&2; exit 1; }
done

# option NAME: a meson build option's value
option() {
  meson introspect "$builddir" --buildoptions |
    /usr/bin/python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"
}
if [ -f "$builddir/build.ninja" ]; then
  prefix=$(option prefix)
  [ "$prefix" = /usr ] || { echo "build-deb.sh: --builddir $builddir has prefix $prefix; a .deb needs /usr (meson setup --prefix=/usr DIR)" >&2; exit 2; }
else
  meson setup "$builddir" "$src" --prefix=/usr >/dev/null
fi
# only what is installed (the tests are half the tree's targets)
mapfile -t targets < <(meson introspect "$builddir" --targets | /usr/bin/python3 -c '
import json, os, sys
for t in json.load(sys.stdin):
    if t["installed"]:
        print("\n".join(os.path.relpath(f, sys.argv[1]) for f in t["filename"]))' "$builddir")
ninja -C "$builddir" "${targets[@]}" >/dev/null

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
meson install -C "$builddir" --no-rebuild --quiet --destdir "$stage/root" >/dev/null
root=$stage/root
version=$(meson introspect "$builddir" --projectinfo |
  /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
arch=$(dpkg --print-architecture)

# dpkg-shlibdeps reads the package names from a debian/control of the current directory
mkdir -p "$stage/src/debian"
printf 'Source: rocelab\n\nPackage: rocelab\nArchitecture: any\n' > "$stage/src/debian/control"
mapfile -t elves < <(find "$root" -type f -perm -u+x -exec sh -c \
  'head -c 4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
shlibs=$(cd "$stage/src" && dpkg-shlibdeps -O "${elves[@]}" 2>"$stage/shlibdeps.log") ||
  { cat "$stage/shlibdeps.log" >&2; echo "build-deb.sh: dpkg-shlibdeps failed" >&2; exit 1; }
depends=${shlibs#shlibs:Depends=}

# Debian keeps man pages compressed
[ ! -d "$root/usr/share/man" ] || find "$root/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9n {} +
mkdir -p "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: rocelab
Version: $version
Architecture: $arch
Maintainer: rocelab developers <rocelab@localhost>
Installed-Size: $(du -sk "$root" | cut -f1)
Depends: $depends, python3, python3-yaml
Recommends: python3-matplotlib, python3-prometheus-client, iproute2, ethtool, util-linux, bash-completion
Suggests: openmpi-bin, tshark
Section: net
Priority: optional
Description: software switch testbed of a RoCE AI fabric
 rocelab emulates a RoCE AI training fabric (switches, links, PFC, ECMP and
 E-ECMP, emulated RDMA NICs running NCCL-like collectives) in one DPDK
 process, on a virtual clock or against live hosts.
 .
 Programs: rocelab-dp, rocelab-topo, rocelab-nic, rocelab-lb, rocelab-p4,
 rocelab-viz, rocelab-experiment, rocelab-fabric, rocelab-dashboard and
 rocelab-exporter; topologies and experiments in /usr/share/rocelab.
CONTROL
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | xargs -0 md5sum > DEBIAN/md5sums)
deb=$out/rocelab_${version}_${arch}.deb
dpkg-deb --build --root-owner-group "$root" "$deb" >/dev/null
echo "$deb"
