// Subscriber<T>: receives messages of type T from one topic.
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include "axon/result.hpp"
#include "axon/sample.hpp"
#include "axon/transport.hpp"

namespace axon {

/// Thread safety: take() from one thread at a time; samples may be dropped
/// on any thread. take() does not allocate, lock or make system calls except
/// when the topic's publishers changed (it then reconnects, once).
template <class T>
class Subscriber {
  static_assert(std::is_trivially_copyable_v<T>,
                "axon::Subscriber<T> needs a trivially copyable T (a fixed-size struct without "
                "pointers, std::string or std::vector)");

 public:
  Subscriber(std::shared_ptr<SubscriberPort> port, std::string topic) noexcept
      : port_(std::move(port)), topic_(std::move(topic)) {}

  /// The oldest queued message of a publisher, read in place. kNoData (an
  /// outcome, not a failure) when nothing is queued.
  [[nodiscard]] Result<Sample<T>> take() noexcept {
    for (;;) {
      auto chunk = port_->take();
      if (!chunk) {
        return chunk.error();
      }
      if (chunk->info.payload_bytes == sizeof(T)) {
        return Sample<T>(port_, *chunk);
      }
      // A publisher with the same type identity sent another size: never
      // hand it to user code.
      port_->release(*chunk);
    }
  }

  /// Publishers connected now.
  [[nodiscard]] std::uint32_t publisher_count() noexcept { return port_->publisher_count(); }
  [[nodiscard]] const std::string& topic() const noexcept { return topic_; }

 private:
  std::shared_ptr<SubscriberPort> port_;
  std::string topic_;
};

}  // namespace axon
