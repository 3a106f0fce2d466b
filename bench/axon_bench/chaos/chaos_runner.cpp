#include "chaos/chaos_runner.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>

#include "chaos/host_faults.hpp"
#include "chaos/net_faults.hpp"
#include "harness/progress.hpp"
#include "tests/support/common/netns.hpp"
#include <axon/domain_view.hpp>

namespace axon_bench {
namespace {

constexpr auto kPollPeriod = std::chrono::milliseconds(5);
/// The components start this long after the last one is ready.
constexpr std::int64_t kStartDelayNs = 200'000'000;
/// How long one read of a node's pool may wait for the node.
constexpr std::int64_t kPoolPatienceNs = 200'000'000;

/// The parent of `pid` (/proc/PID/stat field 4), -1 when it cannot be read.
pid_t parent_of(pid_t pid) {
  std::FILE* stat = std::fopen(fmt::format("/proc/{}/stat", pid).c_str(), "r");
  if (stat == nullptr) {
    return -1;
  }
  char text[512] = {};
  const std::size_t n = std::fread(text, 1, sizeof(text) - 1, stat);
  std::fclose(stat);
  const char* end = std::strrchr(text, ')');  // the command name may hold spaces and parentheses
  int parent = -1;
  if (n > 0 && end != nullptr && std::sscanf(end + 1, " %*c %d", &parent) != 1) {
    parent = -1;
  }
  return static_cast<pid_t>(parent);
}

std::int64_t seconds_ns(double s) { return static_cast<std::int64_t>(std::llround(s * 1e9)); }

/// A component process: which component, which incarnation.
struct Child {
  pid_t pid = -1;
  std::size_t component = 0;
  std::uint32_t incarnation = 0;
  bool killed = false;  ///< By a kill fault: its exit is expected.
  bool exited = false;
};

/// What a fault in progress holds.
struct ActiveFault {
  std::vector<pid_t> helpers;  ///< cpu_hog, memory_pressure.
  std::string file;            ///< shm_full.
  bool network = false;        ///< loss, delay, reorder, partition: in place in the hosts' namespaces.
  DelayerProcess delayer;      ///< delay, reorder: the process that holds the host's packets.
};

class Runner {
 public:
  Runner(const ChaosPlan& plan, ChaosShared& shared) : plan_(plan), shared_(shared) {
    result_.events.resize(plan.faults.size());
    for (std::size_t i = 0; i < plan.faults.size(); ++i) {
      result_.events[i].fault = i;
    }
    active_.resize(plan.faults.size());
  }

  ~Runner() { abort_all(); }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  ChaosRunResult run(const std::string& label) {
    const Scenario& s = plan_.scenario;
    for (std::size_t c = 0; c < s.components.size(); ++c) {
      fork_component(c, 0);
    }
    const double run_s = s.warmup_s + s.duration_s + static_cast<double>(kChaosGraceNs) / 1e9;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<std::int64_t>(run_s * 1000) + 90'000);
    ProgressLine progress(label, static_cast<std::uint64_t>(std::ceil(run_s)), "s");
    ChaosControl& control = *shared_.control;
    bool released = false;
    while (std::any_of(children_.begin(), children_.end(), [](const Child& c) { return !c.exited; })) {
      reap();
      const std::int64_t now = now_ns();
      // start_ns: relaxed, this thread is its only writer. ready: acquire pairs with the components' acq_rel
      // increments (what each did before it was ready happens before the start).
      if (control.start_ns.load(std::memory_order_relaxed) == 0 &&
          control.ready.load(std::memory_order_acquire) == s.components.size()) {
        // Release pairs with the components' acquire load.
        control.start_ns.store(now + kStartDelayNs, std::memory_order_release);
        result_.times = ChaosTimes::from(s, now + kStartDelayNs);
      }
      if (result_.times.start_ns != 0) {
        step_faults(now);
        progress.update(now < result_.times.start_ns
                            ? 0
                            : static_cast<std::uint64_t>((now - result_.times.start_ns) / 1'000'000'000));
      }
      // Acquire pairs with the components' acq_rel increments: their last takes happen before the pool reads.
      if (!released && control.drained.load(std::memory_order_acquire) >= s.components.size()) {
        result_.pools = read_pools();
        control.release.store(1, std::memory_order_release);  // pairs with the components' acquire load
        released = true;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        throw std::runtime_error(fmt::format("timed out after {:.0f} s ({})", run_s + 90, label));
      }
      std::this_thread::sleep_for(kPollPeriod);
    }
    finish();
    return result_;
  }

 private:
  void fork_component(std::size_t component, std::uint32_t incarnation) {
    std::fflush(nullptr);  // the child must not print the parent's buffered output again
    const pid_t pid = ::fork();
    if (pid < 0) {
      throw std::runtime_error("fork: " + error_text(errno));
    }
    if (pid == 0) {
      int status = 1;
      try {
        status = run_chaos_component(plan_, shared_, component, incarnation);
      } catch (const std::exception& e) {
        shared_.components[component].error.set(e.what());
      } catch (...) {
        shared_.components[component].error.set("unknown exception");
      }
      std::fflush(nullptr);
      ::_exit(status);  // no atexit handlers or static destructors of the parent's copy
    }
    children_.push_back({.pid = pid, .component = component, .incarnation = incarnation});
  }

  /// Collects exited components; one that failed by itself ends the run.
  void reap() {
    for (Child& c : children_) {
      int status = 0;
      if (c.exited || ::waitpid(c.pid, &status, WNOHANG) != c.pid) {
        continue;
      }
      c.exited = true;
      if (c.killed || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        continue;
      }
      const std::string& name = plan_.scenario.components[c.component].name;
      std::string why = shared_.components[c.component].error.str();
      if (why.empty()) {
        why = WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status))
                                  : fmt::format("exited with status {}", WEXITSTATUS(status));
      }
      throw std::runtime_error(fmt::format("component '{}' (incarnation {}): {}", name, c.incarnation, why));
    }
  }

  Child* live_child(int component) {
    for (Child& c : children_) {
      if (!c.exited && !c.killed && static_cast<int>(c.component) == component) {
        return &c;
      }
    }
    return nullptr;
  }

  void step_faults(std::int64_t now) {
    const std::int64_t window = result_.times.window_begin_ns;
    for (std::size_t i = 0; i < plan_.faults.size(); ++i) {
      const Fault& f = plan_.faults[i];
      FaultEvent& e = result_.events[i];
      if (e.begun_s < 0 && now >= window + seconds_ns(f.at_s)) {
        begin(i, active_[i]);
        e.begun_s = static_cast<double>(now_ns() - window) / 1e9;
      } else if (e.begun_s >= 0 && e.ended_s < 0 && now >= window + seconds_ns(e.begun_s + f.for_s)) {
        end(i, active_[i]);
        e.ended_s = static_cast<double>(now_ns() - window) / 1e9;
      }
    }
  }

  void begin(std::size_t index, ActiveFault& a) {
    const Fault& f = plan_.faults[index];
    FaultEvent& e = result_.events[index];
    switch (f.kind) {
      case FaultKind::kKill:
        if (Child* c = live_child(f.component)) {
          c->killed = true;
          ::kill(c->pid, SIGKILL);
        }
        break;
      case FaultKind::kStop:
        if (Child* c = live_child(f.component)) {
          ::kill(c->pid, SIGSTOP);
        }
        break;
      case FaultKind::kBurst: set_burst(shared_.burst_permille[static_cast<std::size_t>(f.topic)], f.factor); break;
      case FaultKind::kCpuHog:
        a.helpers = start_cpu_hogs(online_cpu_count());
        e.note = fmt::format("{} busy processes", a.helpers.size());
        break;
      case FaultKind::kMemoryPressure: {
        std::string error;
        const auto asked =
            static_cast<std::uint64_t>(static_cast<double>(mem_available_bytes()) * f.fill_percent / 100);
        e.note = fmt::format("asked for {} MiB", asked >> 20);
        const pid_t pid = start_memory_filler(f.fill_percent, &shared_.filled_bytes[index], error);
        if (pid < 0) {
          throw std::runtime_error("memory_pressure: " + error);
        }
        a.helpers.push_back(pid);
        break;
      }
      case FaultKind::kShmFull: {
        const std::string dir = shm_directory();
        std::string error;
        const std::uint64_t bytes = shm_fill_bytes(dir, f.leave_mib, error);
        if (!error.empty()) {
          throw std::runtime_error(error);
        }
        a.file = fmt::format("{}/axon_chaos_fill_{}", dir, ::getpid());
        if (const std::string failed = fill_file(a.file, bytes); !failed.empty()) {
          a.file.clear();
          throw std::runtime_error(failed);
        }
        e.note = fmt::format("wrote {} MiB, {} MiB left free", bytes >> 20, free_bytes_in(dir) >> 20);
        break;
      }
      case FaultKind::kLoss:
      case FaultKind::kDelay:
      case FaultKind::kReorder:
      case FaultKind::kPartition:
        if (plan_.hosts == nullptr) {
          throw std::runtime_error("a network fault in a run without virtual hosts");
        }
        if (const std::string error = apply_net_fault(*plan_.hosts, f, a.delayer); !error.empty()) {
          throw std::runtime_error(error);
        }
        a.network = true;
        break;
    }
  }

  void end(std::size_t index, ActiveFault& a) {
    const Fault& f = plan_.faults[index];
    switch (f.kind) {
      case FaultKind::kKill: {
        // The killed incarnation must be gone before its successor takes its name.
        for (Child& c : children_) {
          if (static_cast<int>(c.component) == f.component && c.killed && !c.exited) {
            ::waitpid(c.pid, nullptr, 0);  // SIGKILLed: returns at once
            c.exited = true;
          }
        }
        std::uint32_t next = 0;
        for (const Child& c : children_) {
          if (static_cast<int>(c.component) == f.component) {
            next = std::max(next, c.incarnation + 1);
          }
        }
        fork_component(static_cast<std::size_t>(f.component), next);
        break;
      }
      case FaultKind::kStop:
        if (Child* c = live_child(f.component)) {
          ::kill(c->pid, SIGCONT);
        }
        break;
      case FaultKind::kBurst: set_burst(shared_.burst_permille[static_cast<std::size_t>(f.topic)], 1.0); break;
      case FaultKind::kCpuHog: stop_processes(a.helpers); break;
      case FaultKind::kMemoryPressure:
        stop_processes(a.helpers);  // reaped: what it wrote last is what it held
        result_.events[index].note += fmt::format(", held {} MiB when it ended", shared_.filled_bytes[index] >> 20);
        break;
      case FaultKind::kShmFull:
        if (!a.file.empty()) {
          ::unlink(a.file.c_str());
          a.file.clear();
        }
        break;
      case FaultKind::kLoss:
      case FaultKind::kDelay:
      case FaultKind::kReorder:
      case FaultKind::kPartition: {
        a.network = false;
        const NetFaultRemoval removal = remove_net_fault(*plan_.hosts, f, a.delayer);
        std::string& note = result_.events[index].note;
        note += removal.counts;
        if (!removal.error.empty()) {
          note += (note.empty() ? "" : "; ") + ("not removed: " + removal.error);  // the leftover check reports it
        }
        break;
      }
    }
  }

  /// The shm directories of the run: each virtual host's tmpfs, else this machine's.
  std::vector<std::string> shm_dirs() const {
    std::vector<std::string> dirs;
    if (plan_.hosts != nullptr) {
      for (const axon::test::VirtualHost& host : plan_.hosts->hosts()) {
        dirs.push_back(host.shm_dir);
      }
    } else {
      dirs.push_back(shm_directory());
    }
    return dirs;
  }

  /// Reads every pool until all chunks are free or the bound passed.
  PoolOutcome read_pools() {
    PoolOutcome out;
    const auto begin = std::chrono::steady_clock::now();
    const auto bound = begin + std::chrono::milliseconds(static_cast<std::int64_t>(kPoolBoundSeconds * 1000));
    const std::vector<std::string> dirs = shm_dirs();
    for (;;) {
      std::string held;
      std::size_t chunks = 0;
      std::size_t read = 0;
      for (const std::string& dir : dirs) {
        const axon::DomainAddress address{.domain_id = plan_.domain_id, .shm_dir = dir};
        auto pools = axon::read_pool_views(address, "", kPoolPatienceNs);
        if (!pools) {
          held += "the pools could not be read in " + dir + ": " + std::string(pools.error().message()) + "; ";
          continue;
        }
        read += pools->size();
        for (const axon::NodePoolView& pool : *pools) {
          if (!pool.unreadable.empty()) {
            held += fmt::format("node '{}': not read ({}); ", pool.node.name, pool.unreadable);
            continue;
          }
          for (const axon::PoolClassView& c : pool.classes) {
            chunks += c.total_chunks;
            if (c.free_chunks != c.total_chunks) {
              held += fmt::format("node '{}' class {} B: {} of {} free ({} loaned, {} held by subscribers); ",
                                  pool.node.name, c.payload_bytes, c.free_chunks, c.total_chunks, c.loaned,
                                  c.by_subscribers);
            }
          }
        }
      }
      if (read < plan_.scenario.components.size()) {
        held += fmt::format("{} pools found for {} components; ", read, plan_.scenario.components.size());
      }
      out.seconds_to_free = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      out.pools_read = read;
      out.chunks_total = chunks;
      out.held = held;
      out.all_free = held.empty();
      if (out.all_free || std::chrono::steady_clock::now() >= bound) {
        return out;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  /// After every component left: what is left of the run.
  void finish() {
    for (std::size_t i = 0; i < plan_.faults.size(); ++i) {
      if (result_.events[i].begun_s >= 0 && result_.events[i].ended_s < 0) {
        end(i, active_[i]);  // a fault longer than the run (refused by the schedule check)
      }
    }
    // Every process whose parent we are (the components and the helpers are all reaped by now).
    if (DIR* proc = ::opendir("/proc")) {
      while (const dirent* entry = ::readdir(proc)) {  // NOLINT(concurrency-mt-unsafe): one thread reads `proc`
        const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
        if (pid > 0 && parent_of(pid) == ::getpid()) {
          result_.stray.push_back(pid);
        }
      }
      ::closedir(proc);
    }
    const std::string lock = fmt::format("axon_d{}.lock", plan_.domain_id);
    const std::string prefix = fmt::format("axon_d{}_", plan_.domain_id);
    for (const std::string& dir : shm_dirs()) {
      if (DIR* d = ::opendir(dir.c_str())) {
        while (const dirent* entry = ::readdir(d)) {  // NOLINT(concurrency-mt-unsafe): one thread reads `d`
          const std::string name = entry->d_name;
          if (name == lock || name.starts_with(prefix)) {
            result_.shm_left.push_back(plan_.hosts != nullptr ? dir + "/" + name : name);
          }
        }
        ::closedir(d);
      }
    }
    std::sort(result_.shm_left.begin(), result_.shm_left.end());
    if (plan_.hosts != nullptr) {
      result_.net_left = net_faults_left(*plan_.hosts);
    }
  }

  /// Leaves nothing behind after a failure: every process killed (a stopped one too) and reaped, the fill file gone.
  void abort_all() {
    std::vector<pid_t> pids;
    for (Child& c : children_) {
      if (!c.exited) {
        pids.push_back(c.pid);
        c.exited = true;
      }
    }
    for (ActiveFault& a : active_) {
      pids.insert(pids.end(), a.helpers.begin(), a.helpers.end());
      a.helpers.clear();
      if (!a.file.empty()) {
        ::unlink(a.file.c_str());
        a.file.clear();
      }
    }
    for (std::size_t i = 0; i < active_.size(); ++i) {
      if (active_[i].network) {
        (void)remove_net_fault(*plan_.hosts, plan_.faults[i], active_[i].delayer);  // the namespaces go later anyway
        active_[i].network = false;
      }
    }
    if (!pids.empty()) {
      stop_processes(pids);
      remove_domain_files(plan_.domain_id);
      for (const std::string& dir : plan_.hosts != nullptr ? shm_dirs() : std::vector<std::string>{}) {
        remove_domain_files_in(dir, plan_.domain_id);
      }
    }
  }

  const ChaosPlan& plan_;
  ChaosShared& shared_;
  std::vector<Child> children_;
  std::vector<ActiveFault> active_;
  ChaosRunResult result_;
};

}  // namespace

ChaosRunResult run_chaos(const ChaosPlan& plan, ChaosShared& shared, const std::string& label) {
  Runner runner(plan, shared);
  return runner.run(label);
}

}  // namespace axon_bench
