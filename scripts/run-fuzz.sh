#!/usr/bin/env bash
# Builds the libFuzzer targets (CMake preset `fuzz`: clang, AXON_BUILD_FUZZERS,
# nothing else) and runs the UDP datagram fuzzer from its seed corpus for a
# bounded time. The `fuzz` stage of scripts/run-tests.sh runs it in CI.
# Needs clang and libclang-rt-14-dev (scripts/install-deps.sh).
#
#   bash scripts/run-fuzz.sh [SECONDS]   # default: $AXON_FUZZ_SECONDS, else 60
#
# Build dir: build/fuzz (the preset's). Seeds are generated into
# build/fuzz/udp_seeds by make_udp_seeds, so they follow the wire format; what
# the fuzzer finds interesting accumulates in build/fuzz/udp_corpus across
# runs. A finding (crash, leak, timeout, out-of-memory) is written under
# build/fuzz/findings/, its path and the command that replays it are printed,
# and the script exits 1. Exit 2: bad arguments; 3: missing tools or a failed
# build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-${AXON_FUZZ_SECONDS:-60}}
if ! [[ "${seconds}" =~ ^[0-9]+$ ]] || [[ "${seconds}" -eq 0 ]]; then
  echo "usage: run-fuzz.sh [SECONDS]  (a positive whole number; AXON_FUZZ_SECONDS sets the default)" >&2
  exit 2
fi
readonly build_dir=build/fuzz  # binaryDir of the preset
readonly fuzzer="${build_dir}/tests/fuzz/udp_datagram_fuzz"

# libFuzzer ships in libclang-rt-14-dev, not with clang itself: check both, so
# a missing package is named instead of surfacing as a link error.
runtime="$(clang++ -print-file-name="libclang_rt.fuzzer-$(uname -m).a" 2>/dev/null || true)"
if [[ "${runtime}" != /* || ! -f "${runtime}" ]]; then
  echo "run-fuzz: clang++ or its libFuzzer runtime is missing; run: bash scripts/install-deps.sh" \
    "(installs clang and libclang-rt-14-dev)" >&2
  exit 3
fi

if ! cmake --preset fuzz >/dev/null || ! cmake --build --preset fuzz; then
  echo "run-fuzz: configuring or building the fuzz preset failed" >&2
  exit 3
fi

seeds="${build_dir}/udp_seeds"
corpus="${build_dir}/udp_corpus"
findings="${PWD}/${build_dir}/findings/$(date +%Y%m%d-%H%M%S)"  # absolute: printed for CI logs
mkdir -p "${seeds}" "${corpus}" "${findings}"
"${build_dir}/tests/fuzz/make_udp_seeds" "${seeds}"

# New inputs go to the first directory; the seeds are only read. One process:
# CI shares two cores with the other stages' leftovers. libFuzzer's progress
# (a line per new input) goes to a log; the end of it is printed below.
log="${build_dir}/udp_fuzz.log"
echo "run-fuzz: udp_datagram_fuzz for ${seconds} s from $(find "${seeds}" -type f | wc -l) seeds" \
  "and $(find "${corpus}" -type f | wc -l) corpus inputs (progress in ${log})"
set +e
"${fuzzer}" -max_total_time="${seconds}" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="${findings}/" "${corpus}" "${seeds}" >"${log}" 2>&1
status=$?
set -e

mapfile -t found < <(find "${findings}" -type f | sort)
if [[ ${status} -eq 0 && ${#found[@]} -eq 0 ]]; then
  rmdir "${findings}"
  grep -E '^(Done |stat::)' "${log}" || true
  echo "run-fuzz: udp_datagram_fuzz ran ${seconds} s without a finding"
  exit 0
fi
# The sanitizer's or libFuzzer's report is at the end of the log.
tail -n 200 "${log}" >&2
echo "run-fuzz: udp_datagram_fuzz FAILED (exit status ${status}); full log: ${PWD}/${log}" >&2
for input in "${found[@]}"; do
  echo "run-fuzz: reproducer: ${input}" >&2
  echo "run-fuzz:   replay with: ${PWD}/${fuzzer} ${input}" >&2
done
if [[ ${#found[@]} -eq 0 ]]; then
  echo "run-fuzz: no reproducer was written; see the fuzzer's report above" >&2
fi
exit 1
