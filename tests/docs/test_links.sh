#!/usr/bin/env bash
# Every relative Markdown link in the repository's *.md files must point to an
# existing file or folder (the part before any #anchor). Web links (http:, https:,
# mailto:) and pure #anchors are not checked. Links inside code (fenced blocks,
# `inline`) are not links and are skipped.
# Usage: test_links.sh [ROOT]   (default: the repository holding this script)
# Exit 0: all resolve; 1: some do not (each printed as FILE:LINE: link); 2: bad use.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${1:-$(cd "$here/../.." && pwd)}
[ -d "$root" ] || { echo "test_links: $root: no such folder" >&2; exit 2; }

check() {  # check ROOT: prints the broken links, exit status 1 if any
	python3 - "$1" <<'PY'
import os, re, sys
root = sys.argv[1]
skip = re.compile(r'^(build[^/]*|\.git|subprojects|results|node_modules)$')
inline = re.compile(r'\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
refdef = re.compile(r'^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)')
bad = 0
for d, dirs, files in os.walk(root):
    dirs[:] = sorted(x for x in dirs if not skip.match(x))
    for f in sorted(files):
        if not f.endswith('.md'):
            continue
        path = os.path.join(d, f)
        fence = None
        for n, line in enumerate(open(path, encoding='utf-8', errors='replace'), 1):
            m = re.match(r'^\s*(```+|~~~+)', line)
            if m:
                fence = None if fence and m.group(1)[0] == fence[0] else (fence or m.group(1))
                continue
            if fence or line.startswith('    ') and not line.strip().startswith(('-', '*', '|')):
                continue
            text = re.sub(r'`[^`]*`', '', line)
            targets = inline.findall(text)
            m = refdef.match(text)
            if m:
                targets.append(m.group(1))
            for t in targets:
                if re.match(r'^[a-z][a-z0-9+.-]*:', t, re.I) or t.startswith('#'):
                    continue
                target = t.split('#', 1)[0]
                full = os.path.normpath(os.path.join(root, target.lstrip('/')) if t.startswith('/')
                                        else os.path.join(d, target))
                if not os.path.exists(full):
                    print('%s:%d: broken link %s' % (os.path.relpath(path, root), n, t))
                    bad += 1
sys.exit(1 if bad else 0)
PY
}

# The checker must catch a broken link, or its silence means nothing.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs"
printf '# t\n[ok](docs/a.md) [web](https://x.org/y.md) [here](#t)\n[gone](docs/missing.md#part)\n```\n[code](not/checked.md)\n```\n' > "$tmp/README.md"
printf '# a\n[up](../README.md) [ref][r]\n\n[r]: nowhere.md\n' > "$tmp/docs/a.md"
out=$(check "$tmp") && { echo "FAIL: the checker passed a tree with broken links" >&2; exit 1; }
want=$'README.md:3: broken link docs/missing.md#part\ndocs/a.md:4: broken link nowhere.md'
if [ "$out" != "$want" ]; then
	printf 'FAIL: self-check found\n%s\nexpected\n%s\n' "$out" "$want" >&2
	exit 1
fi

if ! check "$root"; then
	echo "FAIL: broken links above (paths are relative to $root)" >&2
	exit 1
fi
echo "ok: every relative link in $root/**/*.md resolves"
