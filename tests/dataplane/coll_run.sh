# SPDX-License-Identifier: BSD-3-Clause
# Shared by the shell tests of --coll ops on servers and plain hosts
# (test_coll_root.sh, test_coll_tree.sh, test_coll_sendrecv.sh): source it
# after setting DP, TOPO_TOOL, DATA and RUN_PREFIX (a name of the test's own).
# It sources tests/common/tap.sh ($tmp, ok/nok/check, tap_done), defines dp()
# and writes the topologies: $tmp/s2.yaml and $tmp/s4.yaml (2 and 4 servers of
# 4 GPUs, meta layout) and $tmp/hosts.yaml (data/coll-no-servers.yaml).
# shellcheck source=../common/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/tap.sh"

dp() { # NAME-SUFFIX ARGS...: one run with a unique --name and a timeout
  timeout 120 "$DP" --clock virtual --flows 0 --name "$RUN_PREFIX-$$-$1" "${@:2}"
}

"$TOPO_TOOL" --generate servers=2,gpus=4,layout=meta,spines=2 -o "$tmp/s2.yaml"
"$TOPO_TOOL" --generate servers=4,gpus=4,layout=meta,spines=2 -o "$tmp/s4.yaml"
cp "$DATA/coll-no-servers.yaml" "$tmp/hosts.yaml"
