# cmake -DCXX=... -DINCLUDE_DIR=... [-DEXTRA_INCLUDE_DIR=...] -DSOURCE=... -DEXPECT=... -P check_first_error.cmake
# Compiles SOURCE (syntax only) and passes when the compilation fails, its
# first "error:" line contains EXPECT, and no error says "incomplete type"
# (the cascade a missing serializer used to cause).
set(extra_include)
if(DEFINED EXTRA_INCLUDE_DIR)
  set(extra_include -I${EXTRA_INCLUDE_DIR})
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C ${CXX} -std=c++20 -fsyntax-only -fdiagnostics-color=never
          -I${INCLUDE_DIR} ${extra_include} ${SOURCE}
  RESULT_VARIABLE result
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output
  TIMEOUT 120)
if(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must not")
endif()
string(REGEX MATCHALL "[^\n]*error:[^\n]*" errors "${output}")
list(LENGTH errors count)
if(count EQUAL 0)
  message(FATAL_ERROR "the compiler failed (${result}) without an error line:\n${output}")
endif()
list(GET errors 0 first)
string(FIND "${first}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the first error does not say '${EXPECT}':\n${first}\n\nall ${count} errors:\n${output}")
endif()
string(FIND "${output}" "incomplete type" cascade)
if(NOT cascade EQUAL -1)
  message(FATAL_ERROR "the friendly error is followed by a cascade (${count} errors):\n${output}")
endif()
message(STATUS "first of ${count} error(s): ${first}")
