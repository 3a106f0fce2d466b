#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs the UDP datagram fuzzer for
# a bounded time. Needs clang and libclang-rt-14-dev (scripts/install-deps.sh).
#
#   bash scripts/run-fuzz.sh [SECONDS]     # default 60
#
# Build dir: build/fuzz (AXON_FUZZ_BUILD_DIR overrides). Seeds are generated
# into BUILD/udp_seeds by make_udp_seeds (so they follow the wire format); what
# the fuzzer finds interesting accumulates in BUILD/udp_corpus across runs. A
# crash leaves BUILD/crash-* and makes the script fail.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-60}
if ! [[ "${seconds}" =~ ^[0-9]+$ ]] || [[ "${seconds}" -eq 0 ]]; then
  echo "usage: run-fuzz.sh [SECONDS]  (a positive number)" >&2
  exit 2
fi
build_dir=${AXON_FUZZ_BUILD_DIR:-build/fuzz}
jobs=${AXON_JOBS:-2}

CC=clang CXX=clang++ cmake -S . -B "${build_dir}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DAXON_BUILD_FUZZERS=ON -DAXON_BUILD_TESTS=OFF -DAXON_BUILD_BENCH=OFF -DAXON_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "${build_dir}" -j "${jobs}" --target udp_datagram_fuzz make_udp_seeds

seeds="${build_dir}/udp_seeds"
corpus="${build_dir}/udp_corpus"
mkdir -p "${seeds}" "${corpus}"
"${build_dir}/tests/fuzz/make_udp_seeds" "${seeds}"

# New inputs go to the first directory; the seeds are only read.
"${build_dir}/tests/fuzz/udp_datagram_fuzz" -max_total_time="${seconds}" -max_len=8192 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="${build_dir}/" "${corpus}" "${seeds}"
echo "run-fuzz: udp_datagram_fuzz ran ${seconds} s without a finding"
