# axon_unity_cli(TARGET SOURCES...): with AXON_UNITY_CLI, compiles the target's SOURCES that include CLI11 in
# batches of kAxonUnityCliBatch (one translation unit each), the rest of its sources one by one.
#
# Why: Debian's CLI11 (2.1, header only) defines its validators (CLI::ExistingFile, CLI::PositiveNumber, ...) as
# const objects at namespace scope, so every translation unit that includes <CLI/CLI.hpp> generates their
# constructors: 15 s of one core under ASan+UBSan, 8 under TSan, 9.5 in the release build, for a file that
# includes nothing else. The sanitizer presets turn this on; the release preset keeps one translation unit per
# source, because clang-tidy reads its compile_commands.json source by source (scripts/lint.sh).
option(AXON_UNITY_CLI "Compile the sources that include CLI11 in batches (CI's sanitizer stages)" OFF)

set(kAxonUnityCliBatch 6)

function(axon_unity_cli target)
  if(NOT AXON_UNITY_CLI)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  set(index 0)
  foreach(source IN LISTS ARGN)
    math(EXPR group "${index} / ${kAxonUnityCliBatch}")
    set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP "${target}_cli_${group}")
    math(EXPR index "${index} + 1")
  endforeach()
endfunction()
