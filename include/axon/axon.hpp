// axon: zero-copy publish/subscribe. Include this one header.
#pragma once

#include "axon/loan.hpp"        // IWYU pragma: export
#include "axon/node.hpp"        // IWYU pragma: export
#include "axon/options.hpp"     // IWYU pragma: export
#include "axon/publisher.hpp"   // IWYU pragma: export
#include "axon/result.hpp"      // IWYU pragma: export
#include "axon/sample.hpp"      // IWYU pragma: export
#include "axon/subscriber.hpp"  // IWYU pragma: export
