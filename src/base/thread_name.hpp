// Names a node's own threads so that `top -H`, `ps -L`, perf and gdb tell
// them from the application's: axon-service (the shared-memory service
// thread), axon-udp and axon-rdma (the transports' receive threads).
#pragma once

#include <pthread.h>

namespace axon::detail {

/// Names the calling thread. At most 15 characters: pthread_setname_np
/// refuses a longer name, and the thread then keeps the one it had.
inline void name_this_thread(const char* name) noexcept { (void)::pthread_setname_np(::pthread_self(), name); }

}  // namespace axon::detail
