#!/usr/bin/env bash
# Measures axon's RDMA transport next to perftest in one Soft-RoCE boot: boots the guest of
# scripts/run-softroce.sh (rxe0 on 10.0.2.15), adds 10.0.2.16 as the second host's address on the same
# device, waits for its RoCE v2 GID, then runs `axon-bench rdma` (ib_write_lat, axon's 2 KiB one-way
# latency, ib_write_bw, axon's 1 MiB throughput, and their ratios). Soft-RoCE is an emulation: quote the
# ratios, never the figures, as RDMA performance.
#
#   cmake --preset release && cmake --build --preset release
#   bash scripts/bench-rdma.sh [axon-bench rdma options...]     e.g. --json /tmp/rdma.json
#
# Environment: AXON_BUILD_DIR (default build/release of this repo), and run-softroce.sh's SOFTROCE_*.
# Needs root, qemu and perftest (scripts/install-deps.sh installs them).
#
# The guest boots with its clock on the TSC (SOFTROCE_APPEND, default "clocksource=tsc tsc=reliable";
# SOFTROCE_APPEND= keeps the kernel's choice). Left alone, the kernel marks qemu's TSC unstable and reads the
# emulated HPET: each clock_gettime() is then a system call and an emulated device access, 2.5 .. 3.4 us against
# 56 .. 82 ns on the TSC in the same guest (and some 20 ns through the vDSO on the machines axon runs on).
# perftest times with rdtsc and reads no clock per message; axon stamps every message it publishes, as its API
# promises, so the HPET charged axon alone several microseconds per hop (docs/performance.md, "The guest's clock").
export SOFTROCE_APPEND="${SOFTROCE_APPEND-clocksource=tsc tsc=reliable}"
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${AXON_BUILD_DIR:-build/release}"
bench="${build_dir}/bench/axon_bench/axon-bench"
if [[ ! -x "${bench}" ]]; then
  echo "bench-rdma: ${bench} not found; build first: cmake --preset release && cmake --build --preset release" >&2
  exit 2
fi
# shellcheck disable=SC2016 # expanded inside the guest
exec bash scripts/run-softroce.sh bash -c '
  set -e
  ip addr add 10.0.2.16/24 dev eth0
  for _ in $(seq 100); do
    grep -q "0000:0000:0000:0000:0000:ffff:0a00:0210" /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null && break
    sleep 0.1
  done
  exec "$0" rdma "$@"' "${bench}" "$@"
