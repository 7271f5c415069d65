#!/usr/bin/env bash
# dataplane/'s layers, bottom up: engine fabric parallel hosts io ctl app. A file may
# include headers of its own layer and of the layers below it, never above. The
# build already refuses most upward includes (each layer's library sees only the
# folders below it); this test names the file, the line and the two layers, and
# also catches a source file left at dataplane/'s top or in an unknown folder.
#   test_layers.sh DATAPLANE_DIR
set -euo pipefail
dir=${1:?usage: test_layers.sh DATAPLANE_DIR}
layers=(engine fabric parallel hosts io ctl app)
declare -A rank home
for i in "${!layers[@]}"; do rank[${layers[$i]}]=$i; done
fail=0
# Which layer owns each header (and .c, for dp_switch.c's include of dp_pipeline.c).
while IFS= read -r f; do
  rel=${f#"$dir"/}; layer=${rel%%/*}; name=${rel##*/}
  if [ "$rel" = "$name" ] || [ -z "${rank[$layer]+x}" ]; then
    echo "not ok: $rel is outside the layers (${layers[*]})"; fail=1; continue
  fi
  [ -z "${home[$name]+x}" ] || { echo "not ok: $name in both ${home[$name]} and $layer"; fail=1; }
  home[$name]=$layer
done < <(find "$dir" -name '*.[ch]' | sort)
checked=0
while IFS= read -r f; do
  rel=${f#"$dir"/}; layer=${rel%%/*}
  [ -n "${rank[$layer]+x}" ] || continue
  while IFS=: read -r line inc; do
    name=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$inc"); name=${name##*/}
    [ -n "${home[$name]+x}" ] || continue   # not a dataplane header (topo.h, ne_nic.h, ...)
    checked=$((checked + 1))
    if [ "${rank[${home[$name]}]}" -gt "${rank[$layer]}" ]; then
      echo "not ok: $rel:$line includes $name of layer ${home[$name]}, above $layer"; fail=1
    fi
  done < <(grep -n '#include "' "$f" || true)
done < <(find "$dir" -name '*.[ch]' | sort)
[ "$checked" -gt 0 ] || { echo "not ok: no dataplane include found under $dir"; exit 1; }
[ "$fail" -eq 0 ] && echo "ok: $checked includes between dataplane files, none upward"
exit "$fail"
