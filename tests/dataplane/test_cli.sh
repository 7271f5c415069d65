#!/usr/bin/env bash
# Bad command lines: every one ends with its exit status (2 bad input, 1 a
# failure of the environment) and a message on stderr that names what is
# wrong. One row of the table per case:
#   STATUS | MESSAGE (a substring of stderr, without '|') | PROGRAM | ARGUMENTS (split on spaces)
# PROGRAM is dp (rocelab-dp), topo (rocelab-topo), lb (rocelab-lb) or nic (rocelab-nic).
# Cases that get as far as DPDK's start have a unique --name (rl-cli<PID>-N) and run in
# a network namespace of their own; the test checks they leave no runtime directory.
# usage: test_cli.sh ROCELAB_DP ROCELAB_TOPO ROCELAB_LB ROCELAB_NIC SOURCE_ROOT   (root)
set -u
if [ "${ROCELAB_IN_NETNS:-}" != 1 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "test_cli.sh: needs root"; echo "0 passed, 1 failed"; exit 1; }
  ROCELAB_IN_NETNS=1 exec timeout 600 unshare --net -- bash "$0" "$@"
fi
declare -A PROG=([dp]=$(realpath "$1") [topo]=$(realpath "$2") [lb]=$(realpath "$3") [nic]=$(realpath "$4"))
SRC=$(realpath "$5")
ip link set lo up
T=$SRC/topologies/default.yaml N=$SRC/tests/bench/null-2x2.yaml PCAP=$SRC/tests/testdata/rxe-rc-ud.pcap
E=$SRC/tests/dataplane/data/emulated.yaml
# '%' then a byte that is not UTF-8: libfyaml 0.7.12 (Debian 12's) loops forever on it (found by fuzz_topology)
NOTUTF8=$(mktemp /tmp/rl-cli-XXXXXX.yaml); printf '%%\xf6' > "$NOTUTF8"
trap 'rm -f "$NOTUTF8"' EXIT
pass=0 fail=0 n=0

# The table. @NAME@ becomes a fresh --name; @T@, @N@, @E@, @PCAP@, @NOTUTF8@ the files above.
TABLE=$(cat <<'ROWS'
2 | a topology is needed: --topology FILE or --clos S,L,H | dp |
2 | unknown or incomplete option '--bogus' | dp | --bogus
2 | unknown or incomplete option '--duration' | dp | --clos 2,2,2 --duration
2 | unexpected argument 'extra' | dp | --clos 2,2,2 extra
2 | bad --clos, want S,L,H: '2,2' | dp | --clos 2,2
2 | give either --topology or --clos, not both | dp | --clos 2,2,2 --topology @T@
2 | /nonexistent.yaml: cannot read | dp | --topology /nonexistent.yaml
2 | bad --clock (live or virtual): 'wall' | dp | --clos 2,2,2 --clock wall
2 | bad --duration (e.g. 10s, 250ms): '10parsecs' | dp | --clos 2,2,2 --duration 10parsecs
2 | want SRC>DST[:key=value,...] | dp | --clos 2,2,2 --gen h0-h1
2 | unknown destination host | dp | --clos 2,2,2 --gen h0>h99
2 | source and destination are the same host | dp | --clos 2,2,2 --gen h0>h0
2 | generator: bad rate=fast | dp | --clos 2,2,2 --gen h0>h1:rate=fast
2 | generator: bad size=10 | dp | --clos 2,2,2 --gen h0>h1:size=10
2 | generator: bad color=red | dp | --clos 2,2,2 --gen h0>h1:color=red
2 | generator: 'flows' is not key=value | dp | --clos 2,2,2 --gen h0>h1:flows
2 | size 9000 is larger than the hosts' frames | dp | --topology @N@ --name @NAME@ --gen h0>h4:size=9000
2 | --rdma 'h0>h1:qps=x': bad qps=x: takes 1..64 | dp | --topology @E@ --clock virtual --name @NAME@ --rdma h0>h1:qps=x
2 | --rdma 'h0>h1:size=257M': bad size=257M: takes SIZE | dp | --topology @E@ --clock virtual --name @NAME@ --rdma h0>h1:size=257M
2 | --rdma 'h0>h1:size=1Q': bad size=1Q: takes SIZE | dp | --topology @E@ --clock virtual --name @NAME@ --rdma h0>h1:size=1Q
2 | --rdma 'h0': want SRC>DST[:key=value,...] | dp | --topology @E@ --clock virtual --name @NAME@ --rdma h0
2 | --rdma 'h0>h1': both ends must be different emulated hosts | dp | --clos 2,2,2 --clock virtual --name @NAME@ --rdma h0>h1
2 | --coll: op=dance: must be allreduce | dp | --topology @E@ --clock virtual --name @NAME@ --coll op=dance
2 | --coll: launch=fast: must be off, nccl | dp | --check --topology @E@ --coll op=allreduce,launch=fast
2 | --coll: hosts=h0:h99: no host | dp | --topology @E@ --clock virtual --name @NAME@ --coll op=allreduce,hosts=h0:h99
2 | --te needs a --coll | dp | --clos 2,2,2 --clock virtual --name @NAME@ --te
2 | --te places a ring's connections; --coll algo=tree | dp | --topology @E@ --clock virtual --name @NAME@ --te --coll op=allreduce,sizes=1M,algo=tree,model=nccl
2 | --nic: bad qpc=lots: takes 0..1048576 | dp | --clos 2,2,2 --nic qpc=lots
2 | --nic: bad miss=never: takes TIME | dp | --clos 2,2,2 --nic miss=never
2 | bad --idle-nap (e.g. 20us, 200us; at most 10ms): '20ms' | dp | --clos 2,2,2 --idle-nap 20ms
2 | /nonexistent-traffic.yaml: cannot read: No such file or directory | dp | --clos 2,2,2 --traffic /nonexistent-traffic.yaml
2 | forward): 'detect=soon' (see --help) | dp | --clos 2,2,2 --pfc-watchdog=detect=soon
2 | forward): 'action=explode' (see --help) | dp | --clos 2,2,2 --pfc-watchdog=action=explode
2 | bad --mem (64..65536 MB): '10' | dp | --clos 2,2,2 --mem 10
2 | bad --capture, want LINK=FILE (at most 16): 'nolink' | dp | --clos 2,2,2 --capture nolink
2 | --capture: no link named 'nolink' | dp | --clos 2,2,2 --clock virtual --name @NAME@ --capture nolink=/tmp/rl-cli-x.pcap
2 | --capture /nonexistent-dir/x.pcap: | dp | --clos 2,2,2 --clock virtual --name @NAME@ --capture leaf0-spine0=/nonexistent-dir/x.pcap
1 | --csv /nonexistent-dir/x.csv: cannot write | dp | --clos 2,2,2 --clock virtual --name @NAME@ --csv /nonexistent-dir/x.csv
1 | (give --mem more, or --mbufs fewer) | dp | --topology @N@ --name @NAME@ --mbufs 16777215 --duration 1s
2 | bad --veth (af_packet or af_xdp): 'tap' | dp | --clos 2,2,2 --veth tap
2 | bad --seed: '-1' | dp | --clos 2,2,2 --seed -1
2 | bad --flows (0..16777216): '99999999999' | dp | --clos 2,2,2 --flows 99999999999
2 | bad --csv-interval: '0' | dp | --clos 2,2,2 --csv-interval 0
2 | bad --lag-policy (best-effort or stop[=TIME], e.g. stop=50ms): 'never' | dp | --clos 2,2,2 --lag-policy never
2 | bad --lag-policy (best-effort or stop[=TIME], e.g. stop=50ms): 'stop=0' | dp | --clos 2,2,2 --lag-policy stop=0
1 | no DPDK port net_af_packet0 (is interface rl-h0 there?) | dp | --topology @T@ --name @NAME@ --duration 1s
2 | rocelab-topo: no command | topo |
2 | rocelab-topo: unknown option --bogus | topo | --bogus
2 | /nonexistent.yaml: cannot read | topo | --check /nonexistent.yaml
2 | bad Clos size | topo | --clos 0,0,0
2 | :1: not UTF-8 text (byte 0xf6) | topo | --check @NOTUTF8@
2 | :1: not UTF-8 text (byte 0xf6) | dp | --topology @NOTUTF8@
2 | --pcap FILE is required | lb |
2 | unknown profile 'nope' | lb | --pcap @PCAP@ --profile nope
2 | unknown algorithm 'md5' | lb | --pcap @PCAP@ --algo md5
2 | bad uplink count (want 1..64) '0' | lb | --pcap @PCAP@ --uplinks 0
2 | /nonexistent.pcap | lb | --pcap /nonexistent.pcap
2 | no mode given | nic |
2 | unknown mode '--bogus' | nic | --bogus
2 | -I IFNAME is required | nic | pingpong
1 | no interface nosuchif0 in this network namespace | nic | pingpong -I nosuchif0
2 | --mtu: 256, 512, 1024, 2048 or 4096 | nic | pingpong -I lo -m 333
2 | --size: bytes, at most 1 GiB | nic | pingpong -I lo -s abc
2 | --rate: bit/s, e.g. 10G | nic | pingpong -I lo --rate fast
2 | --ib-port: the emulated NIC has port 1 only | nic | pingpong -I lo -i 2
ROWS
)
# A virtual-clock pool larger than the memory available (16,777,215 frames of 9 KiB: 155 GiB)
# is refused, on a machine that has less than that to give.
avail_mib=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
if [ "${avail_mib:-0}" -lt 150000 ]; then
  TABLE+=$'\n''1 | MiB are available (give --mbufs fewer) | dp | --topology @E@ --clock virtual --name @NAME@ --mbufs 16777215'
fi

while IFS='|' read -r status msg prog args; do
  status=${status// /} prog=${prog// /}
  msg=${msg# } msg=${msg% }
  n=$((n + 1)); name=rl-cli$$-$n
  args=${args//@NAME@/$name}; args=${args//@T@/$T}; args=${args//@N@/$N}; args=${args//@E@/$E}; args=${args//@PCAP@/$PCAP}; args=${args//@NOTUTF8@/$NOTUTF8}
  read -r -a argv <<< "$args"
  err=$(timeout 60 "${PROG[$prog]}" "${argv[@]}" 2>&1 > /dev/null); rc=$?
  left=""; [ -e "/var/run/dpdk/$name" ] && left=" (left /var/run/dpdk/$name)"
  if [ "$rc" -eq "$status" ] && [[ "$err" == *"$msg"* ]] && [ -z "$left" ]; then
    pass=$((pass + 1)); echo "ok - $prog $args: exit $rc, '$msg'"
  else
    fail=$((fail + 1)); echo "not ok - $prog $args: exit $rc (want $status)$left; stderr: $(echo "$err" | tail -2 | tr '\n' ' ')"
    echo "#   wanted: $msg"
  fi
done <<< "$TABLE"
echo "$pass passed, $fail failed ($n command lines)"
[ "$fail" -eq 0 ] && [ "$n" -ge 20 ]
