// The pool of a scenario component's node, shared by `scenario` and `chaos` (both fork one process per component).
#pragma once

#include <vector>

#include "scenario/scenario_config.hpp"
#include <axon/options.hpp>

namespace axon_bench {

/// One class per payload size `c` publishes, with room for every queue of that topic plus what is held and
/// loaned; empty when it publishes nothing.
std::vector<axon::ChunkClassConfig> component_chunk_classes(const Scenario& s, const ScenarioComponent& c);

/// For a component on a virtual host (`chaos`): component_chunk_classes() plus room for every topic it takes from
/// a component on another host. The UDP transport reassembles each arriving message into a chunk of the receiving
/// node's pool (its stand-in publisher's), which the topic's queue then holds: without such a class the messages
/// are dropped (NetworkCounters::pool_exhausted).
std::vector<axon::ChunkClassConfig> component_chunk_classes_on_hosts(const Scenario& s, const ScenarioComponent& c);

}  // namespace axon_bench
