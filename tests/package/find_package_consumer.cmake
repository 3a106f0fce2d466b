# Run by ctest as `cmake -P` (see CMakeLists.txt beside this file):
#   1. cmake --install AXON_BINARY_DIR --prefix WORK_DIR/prefix
#   2. configure CONSUMER_SOURCE_DIR with CMAKE_PREFIX_PATH=WORK_DIR/prefix
#   3. build it and run the consumer, which must exit 0
# WORK_DIR is removed afterwards, whatever the outcome.
cmake_minimum_required(VERSION 3.25)

foreach(var AXON_BINARY_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "find_package_consumer.cmake: pass -D${var}=...")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# Runs one step; on failure removes WORK_DIR and stops with the step's name.
function(run_step name)
  execute_process(COMMAND ${ARGN} COMMAND_ECHO STDOUT RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    file(REMOVE_RECURSE "${WORK_DIR}")
    message(FATAL_ERROR "package test: ${name} failed (${status})")
  endif()
endfunction()

set(config_args)
if(NOT "${BUILD_TYPE}" STREQUAL "")
  set(config_args --config "${BUILD_TYPE}")
endif()

run_step("installing axon" "${CMAKE_COMMAND}" --install "${AXON_BINARY_DIR}" --prefix "${prefix}" ${config_args})
run_step("configuring the consumer"
  "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${consumer_build}" -G "${GENERATOR}"
  "-DCMAKE_PREFIX_PATH=${prefix}"
  "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
  "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}")
run_step("building the consumer" "${CMAKE_COMMAND}" --build "${consumer_build}" ${config_args})

# Single-config generators put the programs at the top of the build tree;
# multi-config ones in a folder named after the configuration.
foreach(name IN ITEMS axon_package_consumer axon_package_serializers)
  set(program "${consumer_build}/${name}")
  if(NOT EXISTS "${program}" AND NOT "${BUILD_TYPE}" STREQUAL "")
    set(program "${consumer_build}/${BUILD_TYPE}/${name}")
  endif()
  run_step("running ${name}" "${program}")
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
message(STATUS "package test: the installed axon package builds, links and runs")
