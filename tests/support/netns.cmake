# Virtual hosts (network namespaces with their own /dev/shm, netns.hpp): the
# multi-host tests and `axon-bench network` both link this one library, so it
# is built whenever either of them is.
add_library(axon_netns STATIC
  ${CMAKE_CURRENT_LIST_DIR}/netns.cpp
  ${CMAKE_CURRENT_LIST_DIR}/netns_host.cpp
  ${CMAKE_CURRENT_LIST_DIR}/netns_sweep.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run_command.cpp)
axon_layer_includes(axon_netns PRIVATE tests)
target_link_libraries(axon_netns PUBLIC axon)
target_compile_options(axon_netns PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
