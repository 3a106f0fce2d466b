#!/usr/bin/env bash
# House checks: clang-format on every C++ file, clang-tidy on the library.
#   bash scripts/lint.sh format            # clang-format --dry-run --Werror
#   bash scripts/lint.sh tidy BUILD_DIR    # clang-tidy on every library source (BUILD_DIR/compile_commands.json)
#   bash scripts/lint.sh tidy-changed BUILD_DIR
#                                          # clang-tidy on the library sources that changed, or include a
#                                          # file that changed, since .ci/tidy-clean-commit (CI)
#   bash scripts/lint.sh analyze BUILD_DIR [FILE...]
#                                          # the clang static analyzer checks only (slow)
#
# `tidy` runs every check of .clang-tidy but the static analyzer's: the
# analyzer took 10 of the 16 CPU seconds per source (src/node.cpp), some 8
# minutes of CI's 50, and what it finds (null dereferences, leaks, use after
# free) the ASan+UBSan and TSan stages and the fuzzer catch as they run.
# Run `analyze` on the sources you changed before a merge.
#
# CI runs `tidy-changed`: every library source costs clang-tidy some 7 CPU
# seconds, and the whole library (160 sources) was 15 of CI's 70 minutes.
# .ci/tidy-clean-commit names a commit on which `tidy` passed whole; CI checks
# each source that differs from it, or whose compiler dependency file
# (BUILD_DIR/**/*.o.d) lists a file that does, so a header change is checked
# through every library source that includes it. A new .clang-tidy, or a
# clone without that commit, checks everything. After a whole `tidy` passes,
# write that commit into .ci/tidy-clean-commit.
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
  tidy-changed)
    build_dir=${2:?usage: lint.sh tidy-changed BUILD_DIR}
    mapfile -t all_files < <(git ls-files 'src/*.cpp' 'transports/*.cpp' 'serializers/*.cpp')
    base=$(tr -d '[:space:]' <.ci/tidy-clean-commit)
    files=()
    if ! git cat-file -e "${base}^{commit}" 2>/dev/null; then
      echo "lint: ${base} (.ci/tidy-clean-commit) is not in this clone; checking every library source"
      files=("${all_files[@]}")
    elif ! git diff --quiet "${base}" -- .clang-tidy; then
      echo "lint: .clang-tidy changed since ${base}; checking every library source"
      files=("${all_files[@]}")
    else
      # Absolute paths of what changed since the clean commit (this clone's
      # uncommitted changes included).
      changed="$(git diff --name-only "${base}" | sed "s|^|${PWD}/|")"
      # Each compiled source's depfile, found by the source it names first (a
      # target in a subdirectory, src/tools/mcap say, keeps its objects under
      # that subdirectory's CMakeFiles, not the top one). A depfile's paths
      # are absolute, or (ccache's base_dir) relative to the directory the
      # object was compiled in: the depfile's own, up to its CMakeFiles.
      declare -A depfile_of=()
      while IFS=$'\t' read -r source depfile; do
        depfile_of["$(cd "${depfile%%/CMakeFiles/*}" && realpath -m -- "${source}")"]="${depfile}"
      done < <(find "${build_dir}" -name '*.cpp.o.d' -exec awk '
        FNR == 1 { if (NF >= 2 && $2 != "\\") { print $2 "\t" FILENAME; nextfile } }
        FNR == 2 { print $1 "\t" FILENAME; nextfile }' {} +)
      for file in "${all_files[@]}"; do
        depfile="${depfile_of["${PWD}/${file}"]:-}"
        if [[ -z "${depfile}" ]]; then
          files+=("${file}")  # not built here: checked rather than assumed clean
          continue
        fi
        # A depfile's paths pass through the layers' include views (symbolic
        # links): resolved first, from the directory the object was compiled in.
        # grep -c reads to the end: with -q it would stop at the first match
        # and realpath's SIGPIPE would fail the pipeline (pipefail).
        if [[ -n "${changed}" ]] &&
          tr -s ' \\\n' '\n\n\n' <"${depfile}" | grep -v -e ':$' -e '^/usr/' -e '^$' |
          (cd "${depfile%%/CMakeFiles/*}" && xargs realpath -m --) |
          grep -Fxc -f <(printf '%s\n' "${changed}") >/dev/null; then
          files+=("${file}")
        fi
      done
      echo "lint: ${#files[@]} of ${#all_files[@]} library sources changed, or include what changed, since ${base}"
    fi
    if [[ ${#files[@]} -gt 0 ]]; then
      printf '%s\n' "${files[@]}" |
        xargs -P "$(nproc)" -n 4 clang-tidy -p "${build_dir}" --quiet --checks='-clang-analyzer-*' --warnings-as-errors='*'
    fi
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
    echo "usage: lint.sh format | tidy BUILD_DIR | tidy-changed BUILD_DIR | analyze BUILD_DIR [FILE...]" >&2
    exit 2
    ;;
esac
