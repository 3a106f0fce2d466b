# What the tests and axon-bench both use, and nothing else: virtual hosts
# (network namespaces with their own /dev/shm, netns.hpp), running a
# command (run_command.hpp), a scratch directory (temp_dir.hpp) and errno
# text (error_text.hpp). Both link this one library, so it is built whenever
# either of them is; they include its headers as "tests/support/common/...",
# and nothing else of tests/support.
add_library(axon_common_support STATIC
  ${CMAKE_CURRENT_LIST_DIR}/netns.cpp
  ${CMAKE_CURRENT_LIST_DIR}/netns_host.cpp
  ${CMAKE_CURRENT_LIST_DIR}/netns_sweep.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run_command.cpp)
# Its view (cmake/AxonLayers.cmake, rule tests/support/common) holds this folder and the public API, for it and
# for whoever links it.
axon_layer_includes(axon_common_support PUBLIC tests/support/common)
target_link_libraries(axon_common_support PUBLIC axon)
target_compile_options(axon_common_support PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
