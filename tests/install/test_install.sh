#!/usr/bin/env bash
# `meson install` installs what a user needs (issue 39, item 7), and the installed
# commands work away from the source tree: the test installs the build into a
# temporary DESTDIR, then from a temporary directory and with PATH=/usr/bin:/bin
# - finds every program, script command, data file, man page and completion;
# - runs each command's --help (exit 0);
# - checks that rocelab-experiment resolves rocelab-dp and rocelab-topo to the
#   installed ones beside it and a shipped experiment by its name;
# - runs that experiment (--smoke, no pictures) into results/ of the current directory.
#   test_install.sh BUILDDIR
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[ $# -eq 1 ] || { echo "usage: test_install.sh BUILDDIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; echo "FAIL: meson install"; exit 1; }
prefix=$(meson introspect "$build" --buildoptions |
  /usr/bin/python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
p=$tmp/root$prefix
fail=0
have() { # PATH...: each exists
  local f
  for f in "$@"; do
    if [ -e "$p/$f" ]; then echo "ok: installed $f"; else echo "FAIL: not installed: $f"; fail=1; fi
  done
}
cmds=(rocelab-dp rocelab-topo rocelab-nic rocelab-lb rocelab-p4 rocelab-viz rocelab-experiment
      rocelab-fabric rocelab-dashboard rocelab-exporter)
for c in "${cmds[@]}"; do have "bin/$c"; done
have share/rocelab/topologies/default.yaml share/rocelab/experiments/e1-eecmp-qp-scaling.yaml \
  share/rocelab/experiments/clos-2x4x4-emulated.yaml share/rocelab/p4/ecmp.spec \
  share/bash-completion/completions/rocelab-dp share/bash-completion/completions/rocelab-topo
if command -v pandoc >/dev/null; then
  have share/man/man1/rocelab-dp.1 share/man/man1/rocelab-experiment.1 \
    share/man/man5/rocelab-topology.5 share/man/man5/rocelab-traffic.5 share/man/man5/rocelab-experiment.5
fi
[ $fail -eq 0 ] || exit 1

cd "$tmp"
export PATH=/usr/bin:/bin
for c in "${cmds[@]}"; do
  if "$p/bin/$c" --help > "$tmp/help.txt" 2>&1 && [ -s "$tmp/help.txt" ]; then echo "ok: $c --help"
  else echo "FAIL: $c --help:"; cat "$tmp/help.txt"; fail=1; fi
done
"$p/bin/rocelab-dp" --version | grep -q '^rocelab-dp ' || { echo "FAIL: rocelab-dp --version"; fail=1; }

# what the installed experiment command would run
found=$(/usr/bin/python3 - "$p/share/rocelab/scripts" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import rlpaths
print(rlpaths.program("rocelab-dp", "ROCELAB_TEST_UNSET", "dataplane"))
print(rlpaths.program("rocelab-topo", "ROCELAB_TEST_UNSET", "topology"))
print(rlpaths.experiment_file("e1-eecmp-qp-scaling"))
PY
)
want="$p/bin/rocelab-dp
$p/bin/rocelab-topo
$p/share/rocelab/experiments/e1-eecmp-qp-scaling.yaml"
if [ "$found" = "$want" ]; then echo "ok: rocelab-experiment finds the installed programs and experiments"
else echo "FAIL: rocelab-experiment finds:"; echo "$found"; echo "expected:"; echo "$want"; fail=1; fi

unset ROCELAB_DP ROCELAB_TOPO
if "$p/bin/rocelab-experiment" e1-eecmp-qp-scaling --smoke --no-pictures > "$tmp/exp.log" 2>&1 &&
   [ -s "$tmp/results/e1-eecmp-qp-scaling/results.csv" ] && [ -s "$tmp/results/e1-eecmp-qp-scaling/report.md" ]; then
  echo "ok: installed rocelab-experiment e1-eecmp-qp-scaling --smoke wrote results/ here"
else
  echo "FAIL: installed rocelab-experiment run:"; cat "$tmp/exp.log"; fail=1
fi
exit $fail
