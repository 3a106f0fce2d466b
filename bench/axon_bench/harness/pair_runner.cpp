#include "harness/pair_runner.hpp"

#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "harness/process_group.hpp"

namespace axon_bench {

SharedMapping::SharedMapping(std::size_t bytes) : bytes_(bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw std::system_error(errno, std::generic_category(),
                            "mmap of " + std::to_string(bytes) + " shared bytes for the benchmark");
  }
  data_ = static_cast<std::byte*>(p);
}

SharedMapping::~SharedMapping() {
  if (data_ != nullptr) {
    ::munmap(data_, bytes_);
  }
}

void arrive_and_wait(PairControl& control) noexcept {
  // acq_rel/acquire: what each worker did before arriving (connecting, first
  // writes) happens before the other leaves the barrier.
  control.arrived.fetch_add(1, std::memory_order_acq_rel);
  for (std::uint64_t spins = 0; control.arrived.load(std::memory_order_acquire) < 2; ++spins) {
    if (spins < 100'000) {
      cpu_relax();
    } else {
      ::sched_yield();  // both workers may share a CPU when not pinned
    }
  }
}

int fail(PairControl& control, int side, std::string_view message) noexcept {
  char* out = control.side[side].error;
  const std::size_t n = std::min(message.size(), sizeof(SideReport::error) - 1);
  std::memcpy(out, message.data(), n);
  out[n] = '\0';
  return 1;
}

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
  group.record_error = [&](std::size_t side, std::string_view message) {
    fail(control, static_cast<int>(side), message);
  };
  group.error_of = [&](std::size_t side) { return std::string(control.side[side].error); };
  group.name_of = [](std::size_t side) { return "worker " + std::to_string(side); };
  group.progress = [&] { return control.progress.load(std::memory_order_relaxed); };
  group.progress_total = job.progress_total;
  group.timeout = job.timeout;
  return run_process_group(group);
}

void record_pair_cpu(CaseResult& result, const PairControl& control) noexcept {
  const SideReport& sender = control.side[0];
  const SideReport& receiver = control.side[1];
  result.cpu_percent_sender = cpu_percent(sender.measure_begin, sender.measure_end);
  result.cpu_percent_receiver = cpu_percent(receiver.measure_begin, receiver.measure_end);
  result.cpu_percent = *result.cpu_percent_sender + *result.cpu_percent_receiver;
}

}  // namespace axon_bench
