#!/usr/bin/env bash
# Install everything rocelab needs to build, test and run on Debian 12.
# Idempotent: packages already present are skipped, apt is only touched when
# something is missing. Run as root (or with sudo available).
#   scripts/install-deps.sh
set -euo pipefail
. "$(dirname "$0")/lib/cli.sh"
cli_plain "$0" "$@"

PKGS=(
  # build
  meson ninja-build pkg-config gcc clang libclang-rt-14-dev
  # libraries
  libcmocka-dev libpcap-dev libfyaml-dev
  libjansson-dev  # rocelab-dp --json: the report as one JSON document
  libisal-dev  # hashing/: CRC-32 (ICRC, CRC32 hash) through ISA-L
  protobuf-c-compiler libprotobuf-c-dev  # workload/: Chakra execution traces
  dpdk dpdk-dev libdpdk-dev
  libopenmpi-dev openmpi-bin  # rocelab-dp under mpirun (partitions as MPI ranks)
  # tools the tests and scripts drive
  tshark iproute2 iputils-ping iperf3 ethtool procps
  python3 python3-yaml python3-matplotlib
  python3-jsonschema  # tests/dataplane/test_json.sh: rocelab-dp --json against its schema
  # issue 17 (see the fabric): scripts/exporter.py writes the Prometheus text
  # format with python3-prometheus-client; tests/viz checks it with promtool
  # (prometheus) and loads the dashboard in headless chromium; curl fetches
  python3-prometheus-client prometheus chromium curl
  # Mininet-compatible topologies (issue: Mininet)
  mininet
  # soft-RoCE endpoints in qemu VMs (issue: soft-RoCE): kernel with rdma_rxe,
  # an initramfs of busybox + rdma-core/perftest, qemu under TCG; the lab-server VM
  # (scripts/rxe/labserver.sh) boots the same kernel with this root over qemu's 9p
  qemu-system-x86 busybox-static linux-image-amd64 cpio kmod
  rdma-core ibverbs-utils ibverbs-providers perftest
  pandoc  # packaging/man: the man pages, made from docs/reference (issue 39)
  bash-completion  # packaging/completion: loads the installed completion on demand
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no without a prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps: done"
