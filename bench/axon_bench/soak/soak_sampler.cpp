#include "soak/soak_sampler.hpp"

#include <cstdlib>

#include "results/table.hpp"
#include "soak/process_sample.hpp"
#include <axon/domain_view.hpp>

namespace axon_bench {

SoakSampler::SoakSampler(std::uint32_t domain_id, std::int64_t pool_patience_ns)
    : domain_id_(domain_id), pool_patience_ns_(pool_patience_ns) {
  const char* dir = std::getenv("AXON_SHM_DIR");  // NOLINT(concurrency-mt-unsafe): read before the run starts
  shm_dir_ = dir != nullptr && dir[0] != '\0' ? dir : "/dev/shm";
  while (shm_dir_.size() > 1 && shm_dir_.back() == '/') {
    shm_dir_.pop_back();
  }
}

void SoakSampler::sample(SoakSeriesSet& set, double t_s, const std::vector<SoakProcess>& processes) {
  if (!set.begin_sample(t_s)) {
    return;
  }
  for (const SoakProcess& p : processes) {
    const auto s = read_process_sample(p.pid, shm_dir_);
    if (!s) {
      problem("process " + p.name + " (pid " + std::to_string(p.pid) + "): /proc not readable (exited?)");
      continue;
    }
    set.set(p.name, "rss_kib", "", SoakRule::kMemory, s->rss_kib);
    set.set(p.name, "fds", "", SoakRule::kNoGrowth, s->fds);
    set.set(p.name, "maps", "", SoakRule::kNoGrowth, s->maps);
    set.set(p.name, "shm_maps", "", SoakRule::kNoGrowth, s->shm_maps);
    set.set(p.name, "threads", "", SoakRule::kNoGrowth, s->threads);
  }
  sample_registry(set);
  sample_pools(set);
}

void SoakSampler::sample_registry(SoakSeriesSet& set) {
  const auto view = axon::read_domain_view({.domain_id = domain_id_, .shm_dir = {}});
  if (!view || !view->exists) {
    problem(view ? std::string("registry: the domain does not exist")
                 : "registry: " + std::string(view.error().message()));
    return;
  }
  if (!view->consistent) {
    problem("registry: read without the domain lock (a process held it); the sample counts anyway");
  }
  set.set("domain", "registry_slots", "participants", SoakRule::kNoGrowth,
          static_cast<double>(view->participants.size()));
  set.set("domain", "registry_slots", "topics", SoakRule::kNoGrowth, static_cast<double>(view->topics.size()));
  set.set("domain", "registry_slots", "publishers", SoakRule::kNoGrowth, static_cast<double>(view->publishers.size()));
  set.set("domain", "registry_slots", "subscribers", SoakRule::kNoGrowth,
          static_cast<double>(view->subscribers.size()));
}

void SoakSampler::sample_pools(SoakSeriesSet& set) {
  const auto pools = axon::read_pool_views({.domain_id = domain_id_, .shm_dir = {}}, "", pool_patience_ns_);
  if (!pools) {
    problem("pools: " + std::string(pools.error().message()));
    return;
  }
  for (const axon::NodePoolView& pool : *pools) {
    if (!pool.unreadable.empty()) {
      problem("pool of " + pool.node.name + ": " + pool.unreadable);
      continue;
    }
    for (const axon::PoolClassView& c : pool.classes) {
      set.set(pool.node.name, "pool_free_chunks",
              format_bytes(c.payload_bytes) + " of " + std::to_string(c.total_chunks), SoakRule::kNoLoss,
              c.free_chunks);
    }
  }
}

}  // namespace axon_bench
