#!/usr/bin/env bash
# Runs every teaching lab in docs/labs/*.md as a student would: the ```sh lab
# blocks in order (the steps), with the ```sh check blocks between them (the
# lab's "what you should observe", each a threshold the physics guarantees).
# One bash per lab, from the repository root, so that $LAB carries over.
# Usage: test_labs.sh ROOT ROCELAB_DP ROCELAB_TOPO [LAB.md...]
# Exit 0: every lab ran and showed what it says; 1: a lab failed; 2: bad use.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: test_labs.sh ROOT ROCELAB_DP ROCELAB_TOPO [LAB.md...]" >&2; exit 2; }
root=$(cd "$1" && pwd); dp=$(realpath "$2"); topo=$(realpath "$3"); shift 3
for p in "$dp" "$topo"; do [ -x "$p" ] || { echo "test_labs: $p: not a program" >&2; exit 2; }; done
labs=("$@")
[ ${#labs[@]} -gt 0 ] || labs=("$root"/docs/labs/[0-9]*.md)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp    # the labs' mktemp -t folders land here

# blocks FILE: the lab and check blocks of FILE as one script, the build's
# programs in place of build/... (the build folder may have another name)
blocks() {
	awk -v dp="$dp" -v topo="$topo" '
		/^```sh (lab|check)$/ { inb = 1; n++; print "# block " n " (" $2 ", line " NR + 1 ")"; next }
		/^```/ && inb { inb = 0; next }
		inb { gsub(/build\/dataplane\/rocelab-dp/, dp); gsub(/build\/topology\/rocelab-topo/, topo); print }
		END { if (n == 0) exit 1 }' "$1"
}

fail=0
for lab in "${labs[@]}"; do
	name=$(basename "$lab" .md)
	if ! blocks "$lab" > "$tmp/$name.sh"; then
		echo "FAIL $name: no \`\`\`sh lab block"; fail=1; continue
	fi
	grep -q '^# block .*(check' "$tmp/$name.sh" || { echo "FAIL $name: no \`\`\`sh check block"; fail=1; continue; }
	if (cd "$root" && timeout 300 bash -euo pipefail "$tmp/$name.sh") > "$tmp/$name.log" 2>&1; then
		echo "ok   $name: $(tail -n 1 "$tmp/$name.log")"
	else
		echo "FAIL $name (its output follows)"; sed 's/^/    /' "$tmp/$name.log" | tail -n 40; fail=1
	fi
done
# a lab must leave no folder of its own behind (its last block removes $LAB)
left=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | wc -l)
[ "$left" -eq 0 ] || { echo "FAIL: the labs left $left folders in \$TMPDIR"; fail=1; }
exit $fail
