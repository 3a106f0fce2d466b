// How the node creates transports. Not part of the public API.
#pragma once

#include <memory>
#include <string>

#include "axon/options.hpp"
#include "axon/result.hpp"
#include "axon/transport.hpp"

namespace axon::detail {

/// Joins the node's domain over shared memory (transports/shm).
Result<std::shared_ptr<Transport>> create_shm_transport(const std::string& node_name, const NodeOptions& options,
                                                        std::uint32_t domain_id);

}  // namespace axon::detail
