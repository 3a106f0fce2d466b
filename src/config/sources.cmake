# Sources of the deployment config (docs/configuration.md): the YAML reader
# (shared with axon-bench's scenario files), one reader per section and the
# checks across them, what Node::create takes from the file, and which
# transport a topic takes between two hosts. yaml-cpp (Debian
# libyaml-cpp-dev) stays private to the library.
target_sources(axon_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/yaml_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/deployment_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/read_limits.cpp
  ${CMAKE_CURRENT_LIST_DIR}/read_hosts.cpp
  ${CMAKE_CURRENT_LIST_DIR}/read_nodes.cpp
  ${CMAKE_CURRENT_LIST_DIR}/read_topics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/node_pools.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pool_derivation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/qos_conflict.cpp
  ${CMAKE_CURRENT_LIST_DIR}/read_udp.cpp
  ${CMAKE_CURRENT_LIST_DIR}/read_rdma.cpp
  ${CMAKE_CURRENT_LIST_DIR}/check_placement.cpp
  ${CMAKE_CURRENT_LIST_DIR}/node_deployment.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config_usage.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transport_choice.cpp)
find_package(yaml-cpp CONFIG REQUIRED)
target_link_libraries(axon_core PRIVATE yaml-cpp)
