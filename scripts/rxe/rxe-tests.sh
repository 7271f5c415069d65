#!/bin/sh
# Run a list of RDMA tests between two soft-RoCE endpoints: one side `server`, the
# other `client`. Used inside the qemu guest (called by /init) and, on a machine whose
# kernel has rdma_rxe, inside a host network namespace (run.sh --mode ns).
#
# Environment:
#   RL_ROLE      server | client
#   RL_DEV       verbs device (rxe0)        RL_IP    this endpoint's IPv4 (no prefix)
#   RL_PEER      the other endpoint's IPv4  RL_TESTS comma list NAME[:SIZE[:QPS[:ITERS]]]
#   RL_ITERS     default iterations (tool defaults are too many under TCG)
#   RL_TOOL_TIMEOUT  seconds per tool (default 120)
#   RL_SYNC_TIMEOUT  seconds to wait for the peer (default 120)
#   RL_BASE_PORT     first TCP port of the tools' out-of-band exchange (default 18515)
# Tests: pingpong (ibv_rc_pingpong), pingpong_ev (the same with -e), write_bw, read_bw, send_bw, write_lat, read_lat,
# send_lat (perftest). The client waits for the server: for test K the server starts
# the tool, waits until it listens, then answers `ready K` on TCP port 7000+K.
#
# Output, one marker per line (everything else is the tools' own output):
#   @@RL BEGIN k=K test=NAME size=S qps=Q iters=I
#   @@RL END k=K test=NAME rc=RC secs=S.SS
#   @@RL STATS BEGIN / @@RL STATS END   (rdma statistic and hw_counters)
#   @@RL DONE role=ROLE passed=P failed=F
# Exit status: the number of failed tests (0 = all passed).
# --help and bad options off the VM (scripts/lib/cli.sh is not in the initramfs)
if [ -f "$(dirname "$0")/../lib/cli.sh" ]; then
  . "$(dirname "$0")/../lib/cli.sh"
  cli_plain "$0" "$@"
fi

BB=""
command -v busybox >/dev/null 2>&1 && BB=busybox
DEV=${RL_DEV:-rxe0}
TOOL_TO=${RL_TOOL_TIMEOUT:-120}
SYNC_TO=${RL_SYNC_TIMEOUT:-120}
BASE=${RL_BASE_PORT:-18515}
ITERS=${RL_ITERS:-}
M="@@RL"

now_cs() { read -r up _ < /proc/uptime; echo "${up%.*}${up#*.}"; }  # centiseconds
secs_since() { # START_CS
  local d=$(( $(now_cs) - $1 ))
  printf '%d.%02d' $((d / 100)) $((d % 100))
}

# the GID index of our IPv4 address (RoCE v2); rxe puts the link-local IPv6 GID first
gid_index() {
  local want i g
  want=$(echo "$RL_IP" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4 }')
  for i in $(seq 0 15); do
    g=$(cat "/sys/class/infiniband/$DEV/ports/1/gids/$i" 2>/dev/null) || continue
    [ "$g" = "$want" ] && { echo "$i"; return 0; }
  done
  return 1
}

listening() { # PORT: is a TCP socket listening on it here?
  local hex; hex=$(printf ':%04X' "$1")
  awk -v p="$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

wait_ready() { # K CTRLPORT: client side, until the server says `ready K`
  local k=$1 port=$2 t0 r
  t0=$(now_cs)
  while [ $(( $(now_cs) - t0 )) -lt $((SYNC_TO * 100)) ]; do
    r=$($BB timeout 5 $BB nc "$RL_PEER" "$port" < /dev/null 2>/dev/null)
    [ "$r" = "ready $k" ] && return 0
    sleep 1
  done
  return 1
}

pmtu() { # the port's active MTU (ibv_rc_pingpong defaults to 1024 otherwise)
  ibv_devinfo -d "$DEV" 2>/dev/null | awk '/active_mtu/ { print $2; exit }'
}

print_stats() {
  echo "$M STATS BEGIN dev=$DEV"
  rdma statistic show link "$DEV/1" 2>&1
  for f in /sys/class/infiniband/"$DEV"/ports/1/hw_counters/*; do
    [ -f "$f" ] && echo "hw_counters $(basename "$f") $(cat "$f")"
  done
  echo "$M STATS END"
}

[ "$RL_ROLE" = server ] || [ "$RL_ROLE" = client ] || { echo "$M ERROR RL_ROLE must be server or client"; exit 99; }
GID=$(gid_index) || { echo "$M ERROR no RoCE v2 GID for $RL_IP on $DEV"; exit 99; }
MTU=$(pmtu); [ -n "$MTU" ] || MTU=1024
echo "$M INFO role=$RL_ROLE dev=$DEV ip=$RL_IP peer=$RL_PEER gid_index=$GID active_mtu=$MTU"

# the path through the fabric must work before any test (ARP, routes); from our own
# address, so that in the lab-server mode (both endpoints local) it crosses the fabric
t0=$(now_cs); ok=0
while [ $(( $(now_cs) - t0 )) -lt $((SYNC_TO * 100)) ]; do
  if $BB ping -c 1 -W 2 -I "$RL_IP" "$RL_PEER" > /dev/null 2>&1; then ok=1; break; fi
  sleep 1
done
if [ $ok = 1 ]; then
  echo "$M INFO peer $RL_PEER reachable after $(secs_since "$t0") s"
  $BB ping -c 3 -i 0.2 -W 2 -I "$RL_IP" "$RL_PEER" 2>&1 | tail -2
else
  echo "$M ERROR peer $RL_PEER not reachable (ping) within ${SYNC_TO}s"
fi

passed=0 failed=0 k=0
for spec in $(echo "$RL_TESTS" | tr ',' ' '); do
  k=$((k + 1))
  IFS=: read -r name size qps iters <<EOF
$spec
EOF
  port=$((BASE + k)); ctrl=$((7000 + k))
  case $name in
    pingpong|rc_pingpong|ibv_rc_pingpong)
      name=pingpong; size=${size:-4096}; qps=1; iters=${iters:-${ITERS:-200}}
      cmd="ibv_rc_pingpong -d $DEV -g $GID -m $MTU -s $size -n $iters -p $port" ;;
    pingpong_ev) # the same, sleeping on completion events (-e) instead of spinning on the
                 # CQ: the tool leaves the CPU to the fabric and rxe between messages
      size=${size:-4096}; qps=1; iters=${iters:-${ITERS:-200}}
      cmd="ibv_rc_pingpong -e -d $DEV -g $GID -m $MTU -s $size -n $iters -p $port" ;;
    write_bw|read_bw|send_bw|write_lat|read_lat|send_lat)
      case $name in *_bw) d_size=65536 d_iters=${ITERS:-100} ;; *) d_size=64 d_iters=${ITERS:-200} ;; esac
      size=${size:-$d_size}; qps=${qps:-1}; iters=${iters:-$d_iters}
      cmd="ib_$name -d $DEV -x $GID -s $size -n $iters -p $port -F"
      case $name in *_bw) cmd="$cmd -q $qps --report_gbits" ;; *) qps=1 ;; esac ;;
    *) cmd="" ;;
  esac
  echo "$M BEGIN k=$k test=$name size=${size:-} qps=${qps:-} iters=${iters:-}"
  if [ -z "$cmd" ]; then
    echo "$M END k=$k test=$name rc=127 secs=0.00 error=unknown-test"
    failed=$((failed + 1)); continue
  fi
  if [ $ok = 0 ]; then
    echo "$M END k=$k test=$name rc=98 secs=0.00 error=peer-unreachable"
    failed=$((failed + 1)); continue
  fi
  out=/tmp/rl-out.$RL_ROLE.$$.$k  # both roles share one /tmp in the lab-server mode
  t0=$(now_cs)
  if [ "$RL_ROLE" = server ]; then
    echo "$M CMD $cmd"
    $BB timeout "$TOOL_TO" $cmd > "$out" 2>&1 &
    tool=$!
    t1=$(now_cs)
    while ! listening "$port" && kill -0 $tool 2>/dev/null && [ $(( $(now_cs) - t1 )) -lt 3000 ]; do
      sleep 0.2
    done
    # tell the client (once); give up when the tool is gone or after SYNC_TO
    (echo "ready $k" | $BB timeout "$SYNC_TO" $BB nc -l -p "$ctrl" > /dev/null 2>&1) &
    syncer=$!
    wait $tool; rc=$?
    kill $syncer 2>/dev/null; wait $syncer 2>/dev/null
  else
    cmd="$cmd $RL_PEER"
    echo "$M CMD $cmd"
    if wait_ready "$k" "$ctrl"; then
      $BB timeout "$TOOL_TO" $cmd > "$out" 2>&1; rc=$?
    else
      echo "server did not get ready for test $k within ${SYNC_TO}s" > "$out"; rc=97
    fi
  fi
  cat "$out"; rm -f "$out"
  [ $rc = 143 ] || [ $rc = 124 ] && echo "(timed out after ${TOOL_TO}s)"
  echo "$M END k=$k test=$name rc=$rc secs=$(secs_since "$t0")"
  if [ $rc = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done

print_stats
echo "$M DONE role=$RL_ROLE passed=$passed failed=$failed"
exit $failed
