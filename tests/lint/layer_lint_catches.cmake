# lint.layer_includes_catches: the include lint (scripts/check_includes.cmake) fails on includes that cross a
# layer boundary on purpose, naming the file, the line, the include and the rule. Run as
#   cmake -DROOT=<repository> -DWORK_DIR=<scratch> -P tests/lint/layer_lint_catches.cmake
# It copies include/, src/ and transports/ to WORK_DIR, checks that the copy passes, then puts one forbidden
# include at the top of several files and expects each to be reported.
cmake_minimum_required(VERSION 3.25)

foreach(var ROOT WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "layer_lint_catches.cmake: pass -D${var}=...")
  endif()
endforeach()

set(lint "${ROOT}/scripts/check_includes.cmake")
set(rules "${ROOT}/cmake/AxonLayers.cmake")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
foreach(dir IN ITEMS include src transports)
  file(COPY "${ROOT}/${dir}" DESTINATION "${WORK_DIR}")
endforeach()

function(run_lint out_status out_text)
  execute_process(COMMAND "${CMAKE_COMMAND}" "-DROOT=${WORK_DIR}" "-DRULES=${rules}" "-DSCAN=include;src;transports"
                          -P "${lint}"
    RESULT_VARIABLE status OUTPUT_VARIABLE text ERROR_VARIABLE text)
  set(${out_status} "${status}" PARENT_SCOPE)
  set(${out_text} "${text}" PARENT_SCOPE)
endfunction()

function(fail why text)
  file(REMOVE_RECURSE "${WORK_DIR}")
  message(FATAL_ERROR "${why}\n--- lint output ---\n${text}")
endfunction()

run_lint(status text)
if(NOT status EQUAL 0)
  fail("the unchanged copy should pass the lint" "${text}")
endif()

# <file> <include> <what the report must say after "<file>:1: #include "<include>"">
set(cases
  "transports/shm/registry.cpp|axon/node.hpp| (include/axon/node.hpp): the rule for transports/shm allows only"
  "transports/udp/wire_parse.cpp|src/config/yaml_reader.hpp| (src/config/yaml_reader.hpp): the rule for transports/udp allows only"
  "src/base/futex.cpp|src/scheduler/idler.hpp| (src/scheduler/idler.hpp): the rule for src/base allows only"
  "src/scheduler/wait_set.cpp|transports/shm/segment.hpp| (transports/shm/segment.hpp): the rule for src allows only"
  "include/axon/transport.hpp|axon/node.hpp| (include/axon/node.hpp): the rule for include/axon/transport.hpp allows only"
  "transports/shm/segment.cpp|../../src/config/yaml_reader.hpp|: no \"..\" or \".\" in include paths")
foreach(entry IN LISTS cases)
  string(REPLACE "|" ";" entry "${entry}")
  list(GET entry 0 file)
  list(GET entry 1 include)
  file(READ "${WORK_DIR}/${file}" content)
  file(WRITE "${WORK_DIR}/${file}" "#include \"${include}\"\n${content}")
endforeach()

run_lint(status text)
if(status EQUAL 0)
  fail("the lint passed a copy with forbidden includes" "${text}")
endif()
foreach(entry IN LISTS cases)
  string(REPLACE "|" ";" entry "${entry}")
  list(GET entry 0 file)
  list(GET entry 1 include)
  list(GET entry 2 says)
  string(FIND "${text}" "${file}:1: #include \"${include}\"${says}" at)
  if(at EQUAL -1)
    fail("the lint did not report ${file}:1 including \"${include}\" as expected" "${text}")
  endif()
endforeach()
list(LENGTH cases count)
file(REMOVE_RECURSE "${WORK_DIR}")
message("layer lint: reported all ${count} forbidden includes")
