# SPDX-License-Identifier: BSD-3-Clause
# Shared by the live tests: ping every host of a fabric.sh fabric from every
# other. Source it after defining fx (fabric.sh exec NAME ...).
# all_pairs_ping NAME: sets pairs (tried) and bad (failed); prints each failure.
all_pairs_ping() {
  local name=$1 a b ip hosts
  mapfile -t hosts < <(awk '{ print $1 " " $4 }' "/tmp/rocelab-$name/hosts")
  bad=0 pairs=0
  for a in "${hosts[@]}"; do
    for b in "${hosts[@]}"; do
      [ "${a%% *}" = "${b%% *}" ] && continue
      ip=${b#* }; ip=${ip%/*}
      pairs=$((pairs + 1))
      fx "${a%% *}" ping -c 1 -W 2 -q "$ip" > /dev/null 2>&1 || { bad=$((bad + 1)); echo "# ${a%% *} -> $ip failed"; }
    done
  done
}
