#!/usr/bin/env bash
# The test command: configures, builds and tests axon with each CMake preset,
# then fuzzes the UDP datagram parser for a bounded time.
#
#   bash scripts/run-tests.sh               # release, asan (ASan+UBSan), tsan, fuzz
#   bash scripts/run-tests.sh release       # one stage (or several, in order)
#   AXON_FUZZ_SECONDS=300 bash scripts/run-tests.sh fuzz
#
# release, asan and tsan run ctest in their preset; fuzz runs
# scripts/run-fuzz.sh (preset `fuzz`, clang) for $AXON_FUZZ_SECONDS (default
# 60) and counts as one test. Stops at the first stage whose configure, build
# or tests fail. Always ends with one line "N passed, N failed" summed over
# the stages that ran (a configure or build failure counts as one failed
# test), and exits non-zero when anything failed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

readonly all_presets=(release asan tsan fuzz)
if [[ $# -gt 0 ]]; then
  presets=("$@")
else
  presets=("${all_presets[@]}")
fi
for preset in "${presets[@]}"; do
  case " ${all_presets[*]} " in
    *" ${preset} "*) ;;
    *)
      echo "run-tests: unknown stage '${preset}'; choose from: ${all_presets[*]}" >&2
      exit 2
      ;;
  esac
done

passed=0
failed=0
start_s=${SECONDS}
ctest_log="$(mktemp)"
trap 'rm -f "${ctest_log}"' EXIT

banner() {
  echo
  echo "================================================================"
  echo "== $*"
  echo "================================================================"
}

finish() {
  local status=$1
  local elapsed=$((SECONDS - start_s))
  echo
  echo "run-tests: stages ${presets[*]}; total time $((elapsed / 60))m $((elapsed % 60))s"
  echo "${passed} passed, ${failed} failed"
  exit "${status}"
}

# The fuzz stage: one test, failed by a finding or by a failed build.
run_fuzz() {
  local stage_start_s=${SECONDS}
  banner "stage fuzz: udp_datagram_fuzz and rdma_control_fuzz for ${AXON_FUZZ_SECONDS:-60} s in all"
  if bash scripts/run-fuzz.sh; then
    passed=$((passed + 1))
    echo "run-tests: stage fuzz took $((SECONDS - stage_start_s))s"
  else
    failed=$((failed + 1))
    echo "run-tests: stage fuzz failed (the reproducer, if any, is named above)" >&2
    finish 1
  fi
}

for preset in "${presets[@]}"; do
  if [[ "${preset}" == fuzz ]]; then
    run_fuzz
    continue
  fi
  preset_start_s=${SECONDS}
  banner "preset ${preset}: configure"
  if ! cmake --preset "${preset}"; then
    echo "run-tests: configuring preset ${preset} failed" >&2
    failed=$((failed + 1))
    finish 1
  fi

  banner "preset ${preset}: build"
  if ! cmake --build --preset "${preset}"; then
    echo "run-tests: building preset ${preset} failed" >&2
    failed=$((failed + 1))
    finish 1
  fi

  banner "preset ${preset}: test"
  set +e
  ctest --preset "${preset}" 2>&1 | tee "${ctest_log}"
  ctest_status=${PIPESTATUS[0]}
  set -e

  # ctest's summary: "100% tests passed, 0 tests failed out of 12".
  summary="$(grep -Eo '[0-9]+ tests? failed out of [0-9]+' "${ctest_log}" | tail -n 1 || true)"
  if [[ -n "${summary}" ]]; then
    read -r preset_failed _ _ _ _ preset_total <<<"${summary}"
    passed=$((passed + preset_total - preset_failed))
    failed=$((failed + preset_failed))
  elif [[ ${ctest_status} -ne 0 ]]; then
    failed=$((failed + 1))  # ctest failed before it ran anything
  fi
  echo "run-tests: preset ${preset} took $((SECONDS - preset_start_s))s"
  if [[ ${ctest_status} -ne 0 ]]; then
    echo "run-tests: tests of preset ${preset} failed" >&2
    finish 1
  fi
done

finish 0
