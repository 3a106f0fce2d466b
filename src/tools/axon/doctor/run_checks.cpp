#include <array>

#include "src/tools/axon/doctor/check.hpp"

namespace axon::tools::doctor {
namespace {

struct Entry {
  std::string_view name;
  CheckResult (*run)(const HostView&);
};

// The order of the checklist: memory, scheduling and CPUs, then the network.
constexpr std::array kChecks = {
    Entry{"shm", check_shm},
    Entry{"memlock", check_memlock},
    Entry{"huge_pages", check_huge_pages},
    Entry{"transparent_huge_pages", check_transparent_huge_pages},
    Entry{"swap", check_swap},
    Entry{"rtprio", check_rtprio},
    Entry{"cpu_governor", check_cpu_governor},
    Entry{"isolated_cpus", check_isolated_cpus},
    Entry{"irqbalance", check_irqbalance},
    Entry{"clock_source", check_clock_source},
    Entry{"socket_buffers", check_socket_buffers},
    Entry{"rdma_devices", check_rdma_devices},
    Entry{"rdma_memlock", check_rdma_memlock},
};

}  // namespace

std::vector<std::string_view> check_names() {
  std::vector<std::string_view> names;
  names.reserve(kChecks.size());
  for (const auto& entry : kChecks) {
    names.push_back(entry.name);
  }
  return names;
}

std::vector<CheckResult> run_checks(const HostView& host) {
  std::vector<CheckResult> results;
  results.reserve(kChecks.size());
  for (const auto& entry : kChecks) {
    CheckResult result = entry.run(host);
    result.name = entry.name;
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace axon::tools::doctor
