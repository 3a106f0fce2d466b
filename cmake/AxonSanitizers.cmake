# AXON_SANITIZER=address: ASan + UBSan; AXON_SANITIZER=thread: TSan.
if(AXON_SANITIZER STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(AXON_SANITIZER STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT AXON_SANITIZER STREQUAL "")
  message(FATAL_ERROR "AXON_SANITIZER must be '', 'address' or 'thread', not '${AXON_SANITIZER}'")
endif()

# The sanitizer presets build RelWithDebInfo: line tables (-g1) are all a
# sanitizer report needs for file:line frames, and full debug info made a test
# file's compile 28 % slower (udp_loopback_test.cpp 33.5 s -> 24.1 s) and its
# object 2.3 x larger. A Debug build keeps full -g.
if(NOT AXON_SANITIZER STREQUAL "" AND CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
  add_compile_options(-g1)
endif()
# The sanitizer presets optimize at -O1 ("-O1 or higher", as ASan's
# documentation asks) instead of -O2: a test file compiled in half the time
# (tests/unit/rdma/rdma_writer_test.cpp 65 .. 75 s -> 28 .. 36 s under ASan,
# 2026-12-04; graph_commands_process_test.cpp 11.6 -> 8.3 CPU-s and
# src/node.cpp 6.8 -> 4.9 under TSan, 2026-12-05), and the sanitizer stages'
# builds are most of CI's time. One file stays at -O2 under TSan
# (src/scheduler/sources.cmake): the multi-threaded executor's, the only one
# that includes moodycamel::ConcurrentQueue; at -O1 TSan reported a race
# inside that queue, whose fences TSan does not model (its author calls such
# reports false positives that show at low optimization: cameron314/
# concurrentqueue issues 49 and 62).
if(NOT AXON_SANITIZER STREQUAL "" AND CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
  add_compile_options(-O1)
endif()
