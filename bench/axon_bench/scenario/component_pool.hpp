// The pool of a scenario component's node, shared by `scenario` and `chaos` (both fork one process per component).
#pragma once

#include <vector>

#include "scenario/scenario_config.hpp"
#include <axon/options.hpp>

namespace axon_bench {

/// One class per payload size `c` publishes, with room for every queue of that topic plus what is held and
/// loaned; empty when it publishes nothing.
std::vector<axon::ChunkClassConfig> component_chunk_classes(const Scenario& s, const ScenarioComponent& c);

}  // namespace axon_bench
