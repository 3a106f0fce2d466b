#!/usr/bin/env bash
# Installs everything axon needs to build, test, lint and benchmark on Debian 12.
#
# Non-interactive and idempotent: packages already installed are left alone, and
# when nothing is missing the script touches neither the network nor apt's lists.
# Runs as root, or through sudo when started by another user.
#
#   bash scripts/install-deps.sh
set -euo pipefail

packages=(
  # Toolchain and build.
  build-essential cmake git pkg-config
  # Serializers (future work: serializers/flatbuffers, serializers/protobuf).
  libflatbuffers-dev flatbuffers-compiler libprotobuf-dev protobuf-compiler
  # Lock-free queues, RDMA (transports/rdma).
  libconcurrentqueue-dev libibverbs-dev librdmacm-dev
  # Tests and benchmarks.
  libgtest-dev libgmock-dev libbenchmark-dev
  # Libraries the core and the tools link; LZ4 and Zstandard for MCAP chunks (src/tools/mcap).
  libfmt-dev libspdlog-dev libcli11-dev libyaml-cpp-dev liblz4-dev libzstd-dev
  # OpenSSL's libcrypto: AES-256-GCM for authenticated UDP datagrams (transports/udp/envelope.cpp).
  libssl-dev
  # Node.js (Debian 12's is v18; a NodeSource build also does), for the check of axon's MCAP files against the
  # MCAP project's own library (tests/mcap_js); npm below.
  nodejs
  # Lint.
  clang-format clang-tidy
  # Fuzzing (the fuzz stage of scripts/run-tests.sh, scripts/run-fuzz.sh): clang,
  # and libFuzzer with the sanitizer runtimes (Debian 12 ships them apart).
  clang libclang-rt-14-dev
  # The linker (cmake/AxonLinker.cmake): lld links the test programs in a third of GNU ld's time.
  lld
  # Network tools for transport tests in network namespaces, and for the network faults of `axon-bench chaos`
  # (iptables for loss and partitions; for delay and reordering an iptables NFQUEUE rule and axon-net-delay, built
  # with axon-bench on libnetfilter_queue).
  iproute2 iptables libnetfilter-queue-dev
  # RDMA tests on Soft-RoCE (scripts/run-softroce.sh boots Debian's kernel under
  # qemu with rdma_rxe): qemu and its firmware, the initramfs tools, the verbs
  # providers (rxe's libibverbs plug-in), and perftest for the baselines.
  qemu-system-x86 seabios ipxe-qemu busybox-static cpio kmod
  rdma-core ibverbs-providers ibverbs-utils perftest
)

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: apt-get not found; this script supports Debian 12 (bookworm) only" >&2
  exit 1
fi

if [[ "$(id -u)" -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps: run as root, or install sudo" >&2
  exit 1
fi

missing=()
for pkg in "${packages[@]}"; do
  # "install ok installed" is dpkg's status of a fully installed package.
  if [[ "$(dpkg-query -W -f='${Status}' "${pkg}" 2>/dev/null || true)" != "install ok installed" ]]; then
    missing+=("${pkg}")
  fi
done
# Debian packages npm apart from nodejs; NodeSource's nodejs brings its own (and conflicts with Debian's npm).
if ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" </dev/null
fi

# The MCAP project's TypeScript library (@mcap/core, @mcap/nodejs, @mcap/support) at the versions of
# tests/mcap_js/package-lock.json; `npm ci` again only when the lockfile differs from the one last installed.
mcap_js="$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/mcap_js" && pwd)"
lock_sum="$(sha256sum "${mcap_js}/package-lock.json" | cut -d' ' -f1)"
if [[ "$(cat "${mcap_js}/node_modules/.axon-lockfile.sha256" 2>/dev/null || true)" != "${lock_sum}" ]]; then
  echo "install-deps: npm ci in tests/mcap_js"
  (cd "${mcap_js}" && npm ci --no-audit --no-fund --ignore-scripts)
  echo "${lock_sum}" >"${mcap_js}/node_modules/.axon-lockfile.sha256"
fi
echo "install-deps: done"
