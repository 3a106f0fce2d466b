// The domain's graph as the shared-memory registry tells it: who publishes
// and who subscribes a topic, and the word that moves when that changes
// (docs/design/graph-events.md).
#pragma once

#include <string_view>
#include <vector>

#include "axon/result.hpp"
#include "axon/transport.hpp"
#include "transports/shm/domain.hpp"

namespace axon::shm {

/// Thread safety: any thread. try_snapshot() never waits for the domain lock
/// (a stopped process may hold it): it takes it only if it is free now.
class ShmGraph final : public GraphSource {
 public:
  explicit ShmGraph(Domain& domain) noexcept : domain_(domain) {}

  [[nodiscard]] WakeWord& graph_word() noexcept override { return domain_.graph_word(); }
  Result<bool> try_snapshot(std::string_view topic, std::vector<GraphEndpoint>& out) override;
  /// Endpoints this registry does not hold changed (another host's, known to
  /// a wrapping transport): moves the graph word and wakes its waiters, as a
  /// registry change does. Lock-free, no allocation.
  void notify_changed() noexcept;

 private:
  Domain& domain_;
};

/// The endpoints of `topic` in `registry`, each checked before its fields
/// become an index (other processes wrote them): entries naming a topic or
/// participant out of range, or a participant that is not active under the
/// generation the entry recorded, are skipped. Needs the domain lock.
void read_topic_endpoints(const DomainLockGuard& held, const Registry& registry, std::string_view topic,
                          std::vector<GraphEndpoint>& out);

}  // namespace axon::shm
