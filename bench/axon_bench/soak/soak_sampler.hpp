// One sample of a soak run: every process's /proc figures, and the domain's
// registry slots in use and each node's free pool chunks per class, read as
// `axon topic list` and `axon pool` read them (axon/domain_view.hpp, the
// library's own readers: nothing is joined or written).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "soak/soak_series.hpp"

namespace axon_bench {

/// A process the soak watches.
struct SoakProcess {
  std::string name;  ///< The component's name, or "axon-bench".
  int pid = 0;
};

class SoakSampler {
 public:
  /// `pool_patience_ns`: how long each node may take to hand over its pool.
  /// The shm directory is the nodes': AXON_SHM_DIR, else /dev/shm.
  SoakSampler(std::uint32_t domain_id, std::int64_t pool_patience_ns);

  /// Takes sample `set.count()` at `t_s` (seconds from the measured start).
  /// The processes' figures come first, before the domain's readers open and
  /// map anything in this process.
  void sample(SoakSeriesSet& set, double t_s, const std::vector<SoakProcess>& processes);

  /// What could not be read, each with how many samples it missed.
  [[nodiscard]] const std::map<std::string, std::uint64_t>& problems() const noexcept { return problems_; }

 private:
  void sample_registry(SoakSeriesSet& set);
  void sample_pools(SoakSeriesSet& set);
  void problem(const std::string& what) { ++problems_[what]; }

  std::uint32_t domain_id_;
  std::int64_t pool_patience_ns_;
  std::string shm_dir_;
  std::map<std::string, std::uint64_t> problems_;
};

}  // namespace axon_bench
