#include "transports/shm/durable_publishers.hpp"

#include <algorithm>

#include "transports/shm/shm_ports.hpp"

namespace axon::shm {

void DurablePublishers::add(ShmPublisherPort* port) {
  std::lock_guard<std::mutex> guard(mutex_);
  ports_.push_back(port);
  count_.store(static_cast<std::uint32_t>(ports_.size()), std::memory_order_relaxed);
}

void DurablePublishers::forget(ShmPublisherPort* port) noexcept {
  std::lock_guard<std::mutex> guard(mutex_);
  std::erase(ports_, port);
  count_.store(static_cast<std::uint32_t>(ports_.size()), std::memory_order_relaxed);
}

void DurablePublishers::adopt_joiners() noexcept {
  if (!any()) {
    return;
  }
  std::lock_guard<std::mutex> guard(mutex_);
  for (ShmPublisherPort* port : ports_) {
    port->adopt_joiners_if_idle();
  }
}

}  // namespace axon::shm
