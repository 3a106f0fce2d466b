#include "harness/pair_runner.hpp"

#include <algorithm>
#include <stdexcept>

#include "harness/process_group.hpp"

namespace axon_bench {

void arrive_and_wait(PairControl& control) noexcept { control.start.arrive_and_wait(2); }

std::string run_pair(const PairJob& job, PairControl& control) {
  ProcessGroupJob group;
  group.label = job.label;
  group.workers = 2;
  group.body = [&](std::size_t side) {
    if (const std::string pin_error = pin_to_cpu(job.cpus[side]); !pin_error.empty()) {
      return fail(control, static_cast<int>(side), pin_error);
    }
    return job.worker[side](control);
  };
  group.error_of = [&](std::size_t side) -> ErrorText& { return control.side[side].error; };
  group.name_of = [](std::size_t side) { return "worker " + std::to_string(side); };
  group.progress = [&] { return control.progress.load(std::memory_order_relaxed); };
  group.progress_total = job.progress_total;
  group.timeout = job.timeout;
  return run_process_group(group);
}

void run_pair_checked(const PairJob& job, PairControl& control, std::optional<std::uint32_t> domain_id) {
  if (const std::string error = run_pair(job, control); !error.empty()) {
    if (domain_id) {
      remove_domain_files(*domain_id);
    }
    throw std::runtime_error(job.label + ": " + error);
  }
}

void record_pair_cpu(CaseResult& result, const PairControl& control) noexcept {
  const SideReport& sender = control.side[0];
  const SideReport& receiver = control.side[1];
  result.cpu_percent_sender = cpu_percent(sender.measure_begin, sender.measure_end);
  result.cpu_percent_receiver = cpu_percent(receiver.measure_begin, receiver.measure_end);
  result.cpu_percent = *result.cpu_percent_sender + *result.cpu_percent_receiver;
}

std::span<std::int64_t> recorded_latencies(SharedArray<std::int64_t>& slots) noexcept {
  std::int64_t* first = slots.data();
  std::int64_t* last = std::remove(first, first + slots.size(), kMissing);
  return {first, static_cast<std::size_t>(last - first)};
}

}  // namespace axon_bench
