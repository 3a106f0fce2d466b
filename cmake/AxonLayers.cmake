# The layers of axon and what each folder may include (docs/architecture.md, "Layers").
#
# The rules below are the one source of truth for two checks:
#   - the build: axon_layer_includes() gives a target an include view, a directory in the build tree holding
#     symlinks to just the paths its rule allows (include/axon/x.hpp appears as axon/x.hpp), so an upward or
#     sideways #include fails to compile with "No such file or directory";
#   - the lint (scripts/check_includes.cmake, ctest lint.layer_includes): every quoted #include of the tree
#     against the rule of the folder it is in, without compiling, and no "..".
# Include strings stay relative to the repository root ("src/base/log.hpp", "transports/shm/x.hpp") or to
# include/ ("axon/x.hpp").
#
# This file only sets variables and defines functions: the lint includes it in script mode (cmake -P).

# axon_rule(<folder or file> SEES <paths>... [TEMPORARY <paths>...]): the quoted includes of files in <folder>
# may name files in <folder> itself and under the repository paths (folders or files) listed. TEMPORARY lists
# allowances that another change is to remove; the lint reports the ones nothing uses any more. The longest
# rule that is the file itself or one of its folders governs a file.
macro(axon_rule folder)
  cmake_parse_arguments(_axon_rule "" "" "SEES;TEMPORARY" ${ARGN})
  list(APPEND AXON_RULES "${folder}")
  set("AXON_RULE_SEES_${folder}" "${folder};${_axon_rule_SEES}")
  set("AXON_RULE_TEMPORARY_${folder}" "${_axon_rule_TEMPORARY}")
endmacro()

# The plug (include/axon/transport.hpp and what it includes): all a transport knows of axon above it.
set(AXON_PLUG include/axon/transport.hpp include/axon/outcome.hpp include/axon/options.hpp include/axon/result.hpp
              include/axon/type_identity.hpp include/axon/domain_view.hpp
              include/axon/network_counters.hpp)
# The public API. serializers/ (axon::flatbuffers, axon::protobuf) and schemas/ (generated messages) reach a
# target through the targets it links, never through a view; a rule that names them lets the lint accept them.
set(AXON_API include/axon serializers)

set(AXON_RULES "")
foreach(header IN LISTS AXON_PLUG)
  axon_rule(${header} SEES ${AXON_PLUG})
endforeach()
axon_rule(include/axon SEES include/axon)
axon_rule(serializers SEES ${AXON_API})

# Base: clock, errors, log, futex and io_uring waits (target axon_base).
axon_rule(src/base SEES ${AXON_PLUG})
# Transports (axon_shm, axon_udp, axon_rdma): the plug and the base; udp and rdma wrap shm, rdma reuses udp's discovery.
axon_rule(transports/shm SEES src/base ${AXON_PLUG})
axon_rule(transports/udp SEES transports/shm src/base ${AXON_PLUG})
axon_rule(transports/rdma SEES transports/udp transports/shm src/base ${AXON_PLUG})
# Core (axon_core): node, config, scheduler and the public API; no transport.
axon_rule(src SEES src/base include/axon)
# The tools (the axon command, axon_tools and axon_cli): the public API and the base, as any program that links
# libaxon; no transport (what they show of one comes through the API).
axon_rule(src/tools SEES include/axon src/base)
# The MCAP format module (axon_mcap, used by the record and play commands): axon's Result and nothing else.
axon_rule(src/tools/mcap SEES include/axon/result.hpp)
# The composition root (in axon): the one file that knows the transports.
axon_rule(src/node_transport.cpp SEES src/base src/config include/axon transports/shm transports/udp transports/rdma)

# Tests may use internals (unit tests of the ring, the pool, the wire format).
axon_rule(tests SEES ${AXON_API} schemas src transports)
# Unit tests of axon-bench's own logic (the soak's verdicts, the chaos schedule and checks) and the temporary
# directory they write in.
axon_rule(tests/unit/bench SEES ${AXON_API} bench/axon_bench tests/support/common)
# Benchmarks use the public API. The micro benchmarks measure the pool and the rings themselves.
axon_rule(bench SEES ${AXON_API} schemas
  # The support library tests and axon-bench both link (virtual hosts, temporary directories); the library's YAML
  # reader, for scenario files; the io_uring wait that the receive-design baselines measure; the one cpu_relax().
  tests/support/common src/config/yaml_reader.hpp src/base/words_and_fd_wait.hpp src/base/futex.hpp
  src/base/cpu_relax.hpp)
# The support library both link sees the public API only.
axon_rule(tests/support/common SEES include/axon)
# The replay timing benchmark writes its recording with the MCAP module, as `axon record` would.
# Its clock floor waits with play's own clock (src/tools/axon/play/replay_clock.*).
axon_rule(bench/replay SEES ${AXON_API} src/tools/mcap src/tools/axon/play/replay_clock.hpp src/base/cpu_relax.hpp)
# ... and the UDP envelope's sealing and opening (envelope_bench).
axon_rule(bench/micro SEES bench ${AXON_API} schemas transports/shm src/base/cpu_relax.hpp
  transports/udp/envelope.hpp transports/udp/datagram_key.hpp transports/udp/replay_window.hpp)
axon_rule(examples SEES ${AXON_API} schemas)
# The recording benchmark measures the MCAP writer itself next to `axon record`.
axon_rule(bench/record SEES ${AXON_API} src/tools/mcap)

# Folders whose files include one another by paths relative to the folder ("harness/system.hpp" in axon-bench):
# the build gives their targets the folder as an include directory, and the lint looks there too.
set(AXON_INCLUDE_ROOTS bench/axon_bench)

# axon_rule_paths(<rule> <out>): what <rule> allows, TEMPORARY entries included.
function(axon_rule_paths rule out)
  if(NOT "${rule}" IN_LIST AXON_RULES)
    message(FATAL_ERROR "cmake/AxonLayers.cmake has no rule '${rule}'")
  endif()
  set(${out} ${AXON_RULE_SEES_${rule}} ${AXON_RULE_TEMPORARY_${rule}} PARENT_SCOPE)
endfunction()

# axon_layer_view(<rule> <out>): creates (once per configure) the include view of <rule> in the build tree,
# layers/<rule>/include/, and returns its directory. serializers/ and schemas/ are left out (see AXON_API). The
# view ends in include/ so that the paths of the headers seen through it (.../include/axon/x.hpp,
# .../include/src/base/y.hpp) still match .clang-tidy's HeaderFilterRegex.
function(axon_layer_view rule out)
  string(MAKE_C_IDENTIFIER "${rule}" id)
  set(view "${PROJECT_BINARY_DIR}/layers/${id}/include")
  get_property(made GLOBAL PROPERTY "AXON_LAYER_VIEW_${id}")
  if(NOT made)
    file(REMOVE_RECURSE "${view}")
    file(MAKE_DIRECTORY "${view}")
    axon_rule_paths("${rule}" paths)
    list(SORT paths)  # a folder before what is under it
    set(linked "")
    foreach(path IN LISTS paths)
      set(covered FALSE)
      foreach(done IN LISTS linked)
        string(FIND "${path}/" "${done}/" at)
        if(at EQUAL 0)
          set(covered TRUE)
        endif()
      endforeach()
      if(covered OR path MATCHES "^(serializers|schemas)(/|$)")
        continue()
      endif()
      string(REGEX REPLACE "^include/" "" at "${path}")
      get_filename_component(parent "${view}/${at}" DIRECTORY)
      file(MAKE_DIRECTORY "${parent}")
      file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${path}" "${view}/${at}" SYMBOLIC)
      list(APPEND linked "${path}")
    endforeach()
    set_property(GLOBAL PROPERTY "AXON_LAYER_VIEW_${id}" TRUE)
  endif()
  set(${out} "${view}" PARENT_SCOPE)
endfunction()

# axon_layer_includes(<target> <PRIVATE|PUBLIC|INTERFACE> <rule>): the target's include directory is the view
# of <rule>.
function(axon_layer_includes target scope rule)
  axon_layer_view("${rule}" view)
  target_include_directories(${target} ${scope} $<BUILD_INTERFACE:${view}>)
endfunction()
