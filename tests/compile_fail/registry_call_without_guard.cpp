// Every Registry call that reads or writes the tables takes the domain lock's
// guard: one made without it must not compile.
#include "transports/shm/registry.hpp"

namespace shm = axon::shm;

void removes_without_the_lock(shm::Registry& registry) { registry.remove_publisher(0); }
