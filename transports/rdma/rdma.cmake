# The RDMA transport (issue 16; docs/design/rdma-transport.md): libibverbs and librdmacm from rdma-core
# (libibverbs-dev, librdmacm-dev).
# In the library (CMakeLists.txt, AXON_HAVE_RDMA): the node registers its pool with its host's rdma_device at start-up;
# the rest is tested on its own (tests/unit/rdma) until the transport is wired.
find_path(AXON_IBVERBS_INCLUDE_DIR infiniband/verbs.h)
find_library(AXON_IBVERBS_LIBRARY ibverbs)
if(NOT AXON_IBVERBS_INCLUDE_DIR OR NOT AXON_IBVERBS_LIBRARY)
  message(STATUS "axon: libibverbs not found (apt install libibverbs-dev): the RDMA transport is not built")
  return()
endif()

find_path(AXON_RDMACM_INCLUDE_DIR rdma/rdma_cma.h)
find_library(AXON_RDMACM_LIBRARY rdmacm)
if(NOT AXON_RDMACM_INCLUDE_DIR OR NOT AXON_RDMACM_LIBRARY)
  message(STATUS "axon: librdmacm not found (apt install librdmacm-dev): the RDMA transport is not built")
  return()
endif()

add_library(axon_rdma OBJECT
  transports/rdma/async_event.cpp
  transports/rdma/cm_connection.cpp
  transports/rdma/cm_event.cpp
  transports/rdma/cm_listener.cpp
  transports/rdma/completion.cpp
  transports/rdma/completion_queue.cpp
  transports/rdma/connect_private_data.cpp
  transports/rdma/control_encode.cpp
  transports/rdma/control_parse.cpp
  transports/rdma/control_ring.cpp
  transports/rdma/credit_fifo.cpp
  transports/rdma/device_choice.cpp
  transports/rdma/device_description.cpp
  transports/rdma/device_events.cpp
  transports/rdma/device_list.cpp
  transports/rdma/grant_table.cpp
  transports/rdma/inbound_stream.cpp
  transports/rdma/inbound_streams.cpp
  transports/rdma/granted_slots.cpp
  transports/rdma/outbound_streams.cpp
  transports/rdma/pin_limit.cpp
  transports/rdma/peer_links.cpp
  transports/rdma/pool_registration.cpp
  transports/rdma/rdma_hosts_transport.cpp
  transports/rdma/rdma_link.cpp
  transports/rdma/rdma_participant.cpp
  transports/rdma/post_write.cpp
  transports/rdma/rdma_writer.cpp
  transports/rdma/rdma_writer_streams.cpp
  transports/rdma/verbs_handles.cpp)
axon_layer_includes(axon_rdma PRIVATE transports/rdma)
target_include_directories(axon_rdma SYSTEM PUBLIC ${AXON_IBVERBS_INCLUDE_DIR} ${AXON_RDMACM_INCLUDE_DIR})
target_link_libraries(axon_rdma PUBLIC ${AXON_RDMACM_LIBRARY} ${AXON_IBVERBS_LIBRARY} PRIVATE axon_shm axon_base)
target_compile_features(axon_rdma PUBLIC cxx_std_20)
target_compile_options(axon_rdma PRIVATE ${AXON_WARNINGS})
