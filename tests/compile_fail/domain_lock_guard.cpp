// A function that needs the domain lock takes its guard, and a guard comes
// only from DomainLock::lock() or try_lock(): one made from the lock
// without taking it must not compile.
#include "transports/shm/domain_lock.hpp"

namespace shm = axon::shm;

void needs_the_lock(const shm::DomainLockGuard& held);

void forges_a_guard(shm::DomainLock& lock) {
  const shm::DomainLockGuard forged(lock);
  needs_the_lock(forged);
}
