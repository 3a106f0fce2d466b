# lint.layer_views_catch: a layer's include view (cmake/AxonLayers.cmake, axon_layer_includes) lets a file include
# what its rule allows and nothing else: a probe including an allowed header compiles, one including a header of
# another layer fails with "No such file". One syntax-only compile per probe. Run as
#   cmake -DCXX=<compiler> -DLAYERS=<build>/layers -DWORK_DIR=<scratch> -P tests/lint/layer_views_catch.cmake
cmake_minimum_required(VERSION 3.25)

foreach(var CXX LAYERS WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "layer_views_catch.cmake: pass -D${var}=...")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# <view> <an include it allows> <an include it must not find>
set(cases
  "src_base|axon/result.hpp|src/scheduler/idler.hpp"
  "transports_shm|src/base/clock.hpp|axon/node.hpp"
  "transports_shm|axon/transport.hpp|transports/udp/wire_format.hpp"
  "transports_udp|transports/shm/shm_constants.hpp|src/config/yaml_reader.hpp"
  "src|src/base/clock.hpp|transports/shm/shm_constants.hpp")

# Compiles a probe that includes <include> with <view> as its only include directory.
function(compile_probe view include out_status out_text)
  set(probe "${WORK_DIR}/probe.cpp")
  file(WRITE "${probe}" "#include \"${include}\"\n")
  execute_process(COMMAND "${CXX}" -std=c++20 -fsyntax-only "-I${LAYERS}/${view}/include" "${probe}"
    RESULT_VARIABLE status OUTPUT_VARIABLE text ERROR_VARIABLE text)
  set(${out_status} "${status}" PARENT_SCOPE)
  set(${out_text} "${text}" PARENT_SCOPE)
endfunction()

set(failures "")
foreach(entry IN LISTS cases)
  string(REPLACE "|" ";" entry "${entry}")
  list(GET entry 0 view)
  list(GET entry 1 allowed)
  list(GET entry 2 forbidden)
  compile_probe("${view}" "${allowed}" status text)
  if(NOT status EQUAL 0)
    string(APPEND failures "view ${view}: \"${allowed}\" should compile:\n${text}\n")
  endif()
  compile_probe("${view}" "${forbidden}" status text)
  if(status EQUAL 0 OR NOT text MATCHES "No such file")
    string(APPEND failures "view ${view}: \"${forbidden}\" should not be found (status ${status}):\n${text}\n")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
if(NOT failures STREQUAL "")
  message(FATAL_ERROR "${failures}")
endif()
list(LENGTH cases count)
message("layer views: ${count} views found what their rule allows and nothing of the layers they may not use")
