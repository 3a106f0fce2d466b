# Sources of the scheduler layer (executors, wait sets, wait strategies).
target_sources(axon_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/executor_core.cpp
  ${CMAKE_CURRENT_LIST_DIR}/single_threaded_executor.cpp
  ${CMAKE_CURRENT_LIST_DIR}/multi_threaded_executor.cpp
  ${CMAKE_CURRENT_LIST_DIR}/wait_set.cpp
  ${CMAKE_CURRENT_LIST_DIR}/realtime.cpp)
# The multi-threaded executor's work queues: header-only moodycamel
# concurrentqueue (Debian libconcurrentqueue-dev), private to the library.
find_path(AXON_CONCURRENTQUEUE_INCLUDE_DIR concurrentqueue/concurrentqueue.h REQUIRED)
target_include_directories(axon_core PRIVATE ${AXON_CONCURRENTQUEUE_INCLUDE_DIR})
# Under TSan this file keeps -O2 where the rest is built at -O1
# (cmake/AxonSanitizers.cmake says why); the last -O on the line wins.
if(AXON_SANITIZER STREQUAL "thread" AND CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/multi_threaded_executor.cpp PROPERTIES COMPILE_OPTIONS -O2)
endif()
