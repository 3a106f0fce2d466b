# Code generation for message schemas, for axon itself and for projects that
# use axon (installed with the package, included by axonConfig.cmake).
#
#   axon_add_flatbuffers_schemas(<target> SCHEMAS a.fbs b.fbs [INCLUDE_DIRS dir...] [NO_BINARY_SCHEMA])
#     flatc --cpp for each schema, plus <name>_axon.h that gives every table
#     its axon type identity (name + hash of the schema and its includes).
#     <target> is an INTERFACE library: link it and include "<name>_axon.h".
#     flatc also embeds each schema's binary schema (--bfbs-gen-embed,
#     <name>_bfbs_generated.h), which the publishers of the tables of a schema
#     with a root_type store with their topic so that tools (axon topic echo)
#     print their messages (docs/design/schemas.md); NO_BINARY_SCHEMA leaves
#     it out (the tools then print such messages as hex).
#
#   axon_add_protobuf_schemas(<target> PROTOS a.proto b.proto [IMPORT_DIRS dir...])
#     protoc --cpp_out for each file; <target> is a static library of the
#     generated code: link it and include "<name>.pb.h".
include_guard(GLOBAL)

set(_AXON_SCHEMAS_DIR ${CMAKE_CURRENT_LIST_DIR})

function(axon_add_flatbuffers_schemas target)
  cmake_parse_arguments(ARG "NO_BINARY_SCHEMA" "" "SCHEMAS;INCLUDE_DIRS" ${ARGN})
  if(NOT ARG_SCHEMAS)
    message(FATAL_ERROR "axon_add_flatbuffers_schemas(${target}): SCHEMAS is empty")
  endif()
  if(NOT TARGET flatbuffers::flatc)
    find_package(FlatBuffers CONFIG REQUIRED)
  endif()
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/${target})
  file(MAKE_DIRECTORY ${out_dir})
  set(include_args "")
  set(all_schemas "")
  foreach(dir IN LISTS ARG_INCLUDE_DIRS)
    list(APPEND include_args -I ${dir})
  endforeach()
  foreach(schema IN LISTS ARG_SCHEMAS)
    get_filename_component(schema ${schema} ABSOLUTE)
    list(APPEND all_schemas ${schema})
  endforeach()
  set(outputs "")
  set(embed_args "")
  set(embed ON)
  if(ARG_NO_BINARY_SCHEMA)
    set(embed OFF)
  endif()
  foreach(schema IN LISTS all_schemas)
    get_filename_component(name ${schema} NAME_WE)
    get_filename_component(schema_dir ${schema} DIRECTORY)
    set(generated ${out_dir}/${name}_generated.h ${out_dir}/${name}_axon.h)
    if(embed)
      set(embed_args --bfbs-gen-embed)
      list(APPEND generated ${out_dir}/${name}_bfbs_generated.h)
    endif()
    # A list cannot cross a custom command's argument boundary: join with '|'.
    string(JOIN "|" search_dirs ${schema_dir} ${ARG_INCLUDE_DIRS})
    add_custom_command(
      OUTPUT ${generated}
      COMMAND flatbuffers::flatc --cpp --scoped-enums --gen-name-strings ${embed_args} -I ${schema_dir} ${include_args}
              -o ${out_dir} ${schema}
      COMMAND ${CMAKE_COMMAND} -DSCHEMA=${schema} -DOUT=${out_dir}/${name}_axon.h
              -DINCLUDE_DIRS=${search_dirs} -DEMBEDDED=${embed}
              -P ${_AXON_SCHEMAS_DIR}/AxonFlatbuffersIdentity.cmake
      DEPENDS ${all_schemas} ${_AXON_SCHEMAS_DIR}/AxonFlatbuffersIdentity.cmake
      COMMENT "flatc: ${name}.fbs"
      VERBATIM)
    list(APPEND outputs ${generated})
  endforeach()
  add_custom_target(${target}_generate DEPENDS ${outputs})
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_generate)
  target_include_directories(${target} INTERFACE ${out_dir})
  if(TARGET axon::flatbuffers)
    target_link_libraries(${target} INTERFACE axon::flatbuffers)
  else()
    target_link_libraries(${target} INTERFACE axon_flatbuffers)
  endif()
endfunction()

function(axon_add_protobuf_schemas target)
  cmake_parse_arguments(ARG "" "" "PROTOS;IMPORT_DIRS" ${ARGN})
  if(NOT ARG_PROTOS)
    message(FATAL_ERROR "axon_add_protobuf_schemas(${target}): PROTOS is empty")
  endif()
  if(NOT TARGET protobuf::protoc)
    find_package(Protobuf REQUIRED)
  endif()
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/${target})
  file(MAKE_DIRECTORY ${out_dir})
  set(import_args "")
  foreach(dir IN LISTS ARG_IMPORT_DIRS)
    list(APPEND import_args -I ${dir})
  endforeach()
  set(protos "")
  foreach(proto IN LISTS ARG_PROTOS)
    get_filename_component(proto ${proto} ABSOLUTE)
    list(APPEND protos ${proto})
  endforeach()
  set(sources "")
  foreach(proto IN LISTS protos)
    get_filename_component(name ${proto} NAME_WE)
    get_filename_component(proto_dir ${proto} DIRECTORY)
    add_custom_command(
      OUTPUT ${out_dir}/${name}.pb.cc ${out_dir}/${name}.pb.h
      COMMAND protobuf::protoc --cpp_out=${out_dir} -I ${proto_dir} ${import_args} ${proto}
      DEPENDS ${protos}
      COMMENT "protoc: ${name}.proto"
      VERBATIM)
    list(APPEND sources ${out_dir}/${name}.pb.cc)
  endforeach()
  add_library(${target} STATIC ${sources})
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${target} PUBLIC ${out_dir})
  if(TARGET axon::protobuf)
    target_link_libraries(${target} PUBLIC axon::protobuf)
  else()
    target_link_libraries(${target} PUBLIC axon_protobuf)
  endif()
endfunction()
