// axon: zero-copy publish/subscribe. Include this one header.
#pragma once

#include "axon/any_publication.hpp"        // IWYU pragma: export
#include "axon/any_subscription.hpp"       // IWYU pragma: export
#include "axon/block_pool.hpp"             // IWYU pragma: export
#include "axon/bytes.hpp"                  // IWYU pragma: export
#include "axon/callback_subscription.hpp"  // IWYU pragma: export
#include "axon/client.hpp"                 // IWYU pragma: export
#include "axon/deployment_config.hpp"      // IWYU pragma: export
#include "axon/executor.hpp"               // IWYU pragma: export
#include "axon/graph.hpp"                  // IWYU pragma: export
#include "axon/loan.hpp"                   // IWYU pragma: export
#include "axon/node.hpp"                   // IWYU pragma: export
#include "axon/options.hpp"                // IWYU pragma: export
#include "axon/pool_allocator.hpp"         // IWYU pragma: export
#include "axon/publisher.hpp"              // IWYU pragma: export
#include "axon/realtime.hpp"               // IWYU pragma: export
#include "axon/result.hpp"                 // IWYU pragma: export
#include "axon/sample.hpp"                 // IWYU pragma: export
#include "axon/service.hpp"                // IWYU pragma: export
#include "axon/slice.hpp"                  // IWYU pragma: export
#include "axon/subscriber.hpp"             // IWYU pragma: export
#include "axon/wait_set.hpp"               // IWYU pragma: export
#include "axon/wait_strategy.hpp"          // IWYU pragma: export
