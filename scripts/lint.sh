#!/usr/bin/env bash
# House checks: clang-format on every C++ file, clang-tidy on the library.
#   bash scripts/lint.sh format            # clang-format --dry-run --Werror
#   bash scripts/lint.sh tidy BUILD_DIR    # clang-tidy with BUILD_DIR/compile_commands.json (CI)
#   bash scripts/lint.sh analyze BUILD_DIR [FILE...]
#                                          # the clang static analyzer checks only (slow)
#
# `tidy` runs every check of .clang-tidy but the static analyzer's: the
# analyzer took 10 of the 16 CPU seconds per source (src/node.cpp), some 8
# minutes of CI's 50, and what it finds (null dereferences, leaks, use after
# free) the ASan+UBSan and TSan stages and the fuzzer catch as they run.
# Run `analyze` on the sources you changed before a merge.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

case "${1:-}" in
  format)
    mapfile -t files < <(git ls-files '*.hpp' '*.cpp' '*.inl' 2>/dev/null || find include src transports serializers tests bench examples -name '*.[ch]pp')
    clang-format --dry-run --Werror "${files[@]}"
    echo "lint: ${#files[@]} files formatted as .clang-format says"
    ;;
  tidy)
    build_dir=${2:?usage: lint.sh tidy BUILD_DIR}
    mapfile -t files < <(git ls-files 'src/*.cpp' 'transports/*.cpp' 'serializers/*.cpp')
    # Warnings are errors here: the library stays clean.
    printf '%s\n' "${files[@]}" |
      xargs -P "$(nproc)" -n 4 clang-tidy -p "${build_dir}" --quiet --checks='-clang-analyzer-*' --warnings-as-errors='*'
    echo "lint: clang-tidy found nothing in ${#files[@]} library sources"
    ;;
  analyze)
    build_dir=${2:?usage: lint.sh analyze BUILD_DIR [FILE...]}
    shift 2
    if [[ $# -gt 0 ]]; then
      files=("$@")
    else
      mapfile -t files < <(git ls-files 'src/*.cpp' 'transports/*.cpp' 'serializers/*.cpp')
    fi
    printf '%s\n' "${files[@]}" |
      xargs -P "$(nproc)" -n 4 clang-tidy -p "${build_dir}" --quiet --checks='-*,clang-analyzer-core.*,clang-analyzer-cplusplus.*,clang-analyzer-deadcode.*,-clang-analyzer-deadcode.DeadStores,clang-analyzer-unix.*' --warnings-as-errors='*'
    echo "lint: the static analyzer found nothing in ${#files[@]} sources"
    ;;
  *)
    echo "usage: lint.sh format | tidy BUILD_DIR | analyze BUILD_DIR [FILE...]" >&2
    exit 2
    ;;
esac
