#!/usr/bin/env bash
# Builds the libFuzzer targets (CMake preset `fuzz`: clang, AXON_BUILD_FUZZERS,
# nothing else) and runs the UDP datagram fuzzer and the RDMA control message
# fuzzer, each from its seed corpus, for a bounded time in all. The `fuzz`
# stage of scripts/run-tests.sh runs it in CI.
# Needs clang and libclang-rt-14-dev (scripts/install-deps.sh).
#
#   bash scripts/run-fuzz.sh [SECONDS]   # default: $AXON_FUZZ_SECONDS, else 60
#
# Build dir: build/fuzz (the preset's). Seeds are generated into
# build/fuzz/udp_seeds by make_udp_seeds (build/fuzz/rdma_control_seeds by
# make_rdma_control_seeds), so they follow the wire format; what the fuzzers
# find interesting accumulates in build/fuzz/udp_corpus (rdma_control_corpus)
# across runs. SECONDS is the total: a quarter goes to rdma_control_fuzz. A
# finding (crash, leak, timeout, out-of-memory) is written under
# build/fuzz/findings/, its path and the command that replays it are printed,
# the other fuzzer still runs, and the script exits 1. Exit 2: bad arguments; 3: missing tools or a failed
# build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-${AXON_FUZZ_SECONDS:-60}}
if ! [[ "${seconds}" =~ ^[0-9]+$ ]] || [[ "${seconds}" -eq 0 ]]; then
  echo "usage: run-fuzz.sh [SECONDS]  (a positive whole number; AXON_FUZZ_SECONDS sets the default)" >&2
  exit 2
fi
readonly build_dir=build/fuzz  # binaryDir of the preset

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

findings="${PWD}/${build_dir}/findings/$(date +%Y%m%d-%H%M%S)"  # absolute: printed for CI logs

# run_fuzzer NAME SEED_TOOL PREFIX SECONDS MAX_LEN: seeds generated into
# build/fuzz/PREFIX_seeds, new inputs kept in build/fuzz/PREFIX_corpus. New
# inputs go to the first directory; the seeds are only read. One process: CI
# shares two cores with the other stages' leftovers. libFuzzer's progress (a
# line per new input) goes to a log; the end of it is printed below. Returns
# 1 after printing the finding.
run_fuzzer() {
  local name=$1 seed_tool=$2 prefix=$3 secs=$4 max_len=$5
  local fuzzer="${build_dir}/tests/fuzz/${name}"
  local seeds="${build_dir}/${prefix}_seeds" corpus="${build_dir}/${prefix}_corpus"
  local log="${build_dir}/${prefix}_fuzz.log" into="${findings}/${name}"
  mkdir -p "${seeds}" "${corpus}" "${into}"
  if ! "${build_dir}/tests/fuzz/${seed_tool}" "${seeds}"; then
    echo "run-fuzz: ${seed_tool} could not write the seeds of ${name}" >&2
    return 1
  fi
  echo "run-fuzz: ${name} for ${secs} s from $(find "${seeds}" -type f | wc -l) seeds" \
    "and $(find "${corpus}" -type f | wc -l) corpus inputs (progress in ${log})"
  local status=0
  "${fuzzer}" -max_total_time="${secs}" -max_len="${max_len}" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="${into}/" "${corpus}" "${seeds}" >"${log}" 2>&1 || status=$?

  local found
  mapfile -t found < <(find "${into}" -type f | sort)
  if [[ ${status} -eq 0 && ${#found[@]} -eq 0 ]]; then
    rmdir "${into}"
    grep -E '^(Done |stat::)' "${log}" || true
    echo "run-fuzz: ${name} ran ${secs} s without a finding"
    return 0
  fi
  # The sanitizer's or libFuzzer's report is at the end of the log.
  tail -n 200 "${log}" >&2
  echo "run-fuzz: ${name} FAILED (exit status ${status}); full log: ${PWD}/${log}" >&2
  local input
  for input in "${found[@]}"; do
    echo "run-fuzz: reproducer: ${input}" >&2
    echo "run-fuzz:   replay with: ${PWD}/${fuzzer} ${input}" >&2
  done
  if [[ ${#found[@]} -eq 0 ]]; then
    echo "run-fuzz: no reproducer was written; see the fuzzer's report above" >&2
  fi
  return 1
}

# The time is shared: a quarter (at least 1 s) for the RDMA control parser (a
# small parser, saturated in seconds), the rest for the UDP datagrams.
rdma_seconds=$((seconds / 4 > 0 ? seconds / 4 : 1))
udp_seconds=$((seconds - rdma_seconds > 0 ? seconds - rdma_seconds : 1))
failed=0
run_fuzzer udp_datagram_fuzz make_udp_seeds udp "${udp_seconds}" 8192 || failed=1
# Past a control slot (4096) by a little: the "longer than a slot" refusal.
run_fuzzer rdma_control_fuzz make_rdma_control_seeds rdma_control "${rdma_seconds}" 4200 || failed=1
rmdir "${findings}" 2>/dev/null || true
exit "${failed}"
