#include "chaos/fault_schedule.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>

#include "scenario/scenario_yaml.hpp"

namespace axon_bench {
namespace {

/// By FaultKind.
constexpr std::array<std::string_view, 10> kKindNames = {"kill",     "stop", "burst", "cpu_hog", "memory_pressure",
                                                         "shm_full", "loss", "delay", "reorder", "partition"};

/// A fault kind's name read from `node`: one of kKindNames.
std::string_view read_kind_name(YamlReader& r, const YAML::Node& node, const std::string& what) {
  const std::string name = r.choice(
      node, what,
      {"kill", "stop", "burst", "cpu_hog", "memory_pressure", "shm_full", "loss", "delay", "reorder", "partition"});
  return *std::find(kKindNames.begin(), kKindNames.end(), name);
}
/// Delays above this are not a network a vehicle runs on; a chaos window is seconds.
constexpr double kMaxDelayMs = 5000;
/// A burst above this would ask a publisher loop for more than it can keep (the scenario's 100 kHz bound).
constexpr double kMaxBurstFactor = 100;
/// Times and lengths of one fault, at most (a chaos run is minutes, not hours).
constexpr double kMaxFaultSeconds = 3600;

FaultKind kind_of_name(std::string_view name) {
  const auto at = std::find(kKindNames.begin(), kKindNames.end(), name);
  return static_cast<FaultKind>(at - kKindNames.begin());
}

int index_of(const std::vector<std::string>& names, const std::string& name) {
  const auto at = std::find(names.begin(), names.end(), name);
  return at == names.end() ? -1 : static_cast<int>(at - names.begin());
}

double seconds(YamlReader& r, const YAML::Node& map, const char* key, const std::string& what, bool positive) {
  const YAML::Node node = r.field(map, key, what, true);
  const double value = positive ? r.positive(node, what + " " + key) : r.number(node, what + " " + key);
  if (value < 0 || value > kMaxFaultSeconds) {
    r.fail(node, fmt::format("{} {} must be from 0 to {} s, found {}", what, key, kMaxFaultSeconds, value));
  }
  return value;
}

std::string joined(const std::vector<std::string>& names) { return fmt::format("{}", fmt::join(names, ", ")); }

/// A virtual host named by `node` (a `host:` or a `between:` entry).
int read_host(YamlReader& r, const YAML::Node& node, const std::string& what, const Scenario& s) {
  const std::string name = r.text(node, what);
  const int host = index_of(s.hosts, name);
  if (host < 0) {
    r.fail(node, s.hosts.empty()
                     ? fmt::format("{}: no host '{}': the scenario's components name no `host:`, and network faults "
                                   "act between virtual hosts (give every component `host: NAME`)",
                                   what, name)
                     : fmt::format("{}: no host '{}' in the scenario (hosts: {})", what, name, joined(s.hosts)));
  }
  return host;
}

/// A percentage above 0 and at most 100 at `key`.
double read_percent(YamlReader& r, const YAML::Node& map, const char* key, const std::string& what) {
  const YAML::Node node = r.field(map, key, what, true);
  const double value = r.positive(node, what + " " + key);
  if (value > 100) {
    r.fail(node, fmt::format("{} {} must be above 0 and at most 100, found {}", what, key, value));
  }
  return value;
}

double read_delay_ms(YamlReader& r, const YAML::Node& map, const char* key, const std::string& what, bool required) {
  const YAML::Node node = r.field(map, key, what, required);
  if (!node.IsDefined()) {
    return 0;
  }
  const double value = r.number(node, what + " " + key);
  if (value < 0 || value > kMaxDelayMs) {
    r.fail(node, fmt::format("{} {} must be from 0 to {} ms, found {}", what, key, kMaxDelayMs, value));
  }
  return value;
}

/// Where a network fault acts: `host:`, or `component:` (its host), or for a partition `between: [a, b]`.
void read_network_target(YamlReader& r, const YAML::Node& node, const std::string& what, const Scenario& s, Fault& f) {
  const YAML::Node host = node["host"];
  const YAML::Node component = node["component"];
  const YAML::Node between = node["between"];
  const int given = (host.IsDefined() ? 1 : 0) + (component.IsDefined() ? 1 : 0) + (between.IsDefined() ? 1 : 0);
  if (given != 1) {
    r.fail(node, fmt::format("{} needs exactly one of host: (a virtual host), component: (the host it runs on){}", what,
                             f.kind == FaultKind::kPartition ? " or between: [HOST, HOST]" : ""));
  }
  if (host.IsDefined()) {
    f.host = read_host(r, host, what + " host", s);
  } else if (component.IsDefined()) {
    const std::string name = r.text(component, what + " component");
    const auto at = std::find_if(s.components.begin(), s.components.end(),
                                 [&](const ScenarioComponent& c) { return c.name == name; });
    if (at == s.components.end()) {
      r.fail(component, fmt::format("{} component: no component '{}' in the scenario", what, name));
    }
    if (at->host < 0) {
      r.fail(component, fmt::format("{} component: '{}' runs on no virtual host; network faults act between the "
                                    "hosts of a scenario whose components name `host:`",
                                    what, name));
    }
    f.host = at->host;
  } else {
    if (!between.IsSequence() || between.size() != 2) {
      r.fail(between,
             what + " between must be a list of two hosts such as [h0, h1], found " + YamlReader::kind_of(between));
    }
    f.host = read_host(r, between[0], what + " between", s);
    f.peer = read_host(r, between[1], what + " between", s);
    if (f.peer == f.host) {
      r.fail(between[1], fmt::format("{} between: a host cannot be cut off from itself", what));
    }
  }
}

Fault read_fault(YamlReader& r, const YAML::Node& node, std::size_t index, const Scenario& s) {
  const std::string where = "faults #" + std::to_string(index + 1);
  r.expect_map(node, where);
  Fault f;
  f.kind = kind_of_name(read_kind_name(r, r.field(node, "kind", where, true), where + " kind"));
  const std::string what = where + " (" + fault_kind_name(f.kind) + ")";
  std::vector<std::string> components;
  for (const auto& c : s.components) {
    components.push_back(c.name);
  }
  std::vector<std::string> topics;
  for (const auto& t : s.topics) {
    topics.push_back(t.name);
  }
  f.at_s = seconds(r, node, "at_s", what, false);
  switch (f.kind) {
    case FaultKind::kKill:
      r.check_keys(node, {"kind", "at_s", "component", "restart_after_s"}, what);
      f.for_s = seconds(r, node, "restart_after_s", what, true);
      break;
    case FaultKind::kStop:
      r.check_keys(node, {"kind", "at_s", "component", "for_s"}, what);
      f.for_s = seconds(r, node, "for_s", what, true);
      break;
    case FaultKind::kBurst:
      r.check_keys(node, {"kind", "at_s", "topic", "factor", "for_s"}, what);
      f.for_s = seconds(r, node, "for_s", what, true);
      if (const YAML::Node factor = node["factor"]; factor.IsDefined()) {
        f.factor = r.number(factor, what + " factor");
        if (f.factor <= 1 || f.factor > kMaxBurstFactor) {
          r.fail(factor,
                 fmt::format("{} factor must be above 1 and at most {}, found {}", what, kMaxBurstFactor, f.factor));
        }
      } else {
        f.factor = 10;
      }
      break;
    case FaultKind::kCpuHog:
      r.check_keys(node, {"kind", "at_s", "for_s"}, what);
      f.for_s = seconds(r, node, "for_s", what, true);
      break;
    case FaultKind::kMemoryPressure: {
      r.check_keys(node, {"kind", "at_s", "for_s", "fill_percent"}, what);
      f.for_s = seconds(r, node, "for_s", what, true);
      const YAML::Node fill = r.field(node, "fill_percent", what, true);
      f.fill_percent = r.positive(fill, what + " fill_percent");
      if (f.fill_percent > kMaxFillPercent) {
        r.fail(fill, fmt::format("{} fill_percent is {}: at most {} % of MemAvailable, so that the machine never "
                                 "runs out of memory",
                                 what, f.fill_percent, kMaxFillPercent));
      }
      break;
    }
    case FaultKind::kShmFull:
      r.check_keys(node, {"kind", "at_s", "for_s", "leave_mib"}, what);
      f.for_s = seconds(r, node, "for_s", what, true);
      f.leave_mib = r.integer(r.field(node, "leave_mib", what, true), what + " leave_mib", 1, 1ULL << 30);
      break;
    case FaultKind::kLoss:
      r.check_keys(node, {"kind", "at_s", "host", "component", "percent", "for_s"}, what);
      f.for_s = seconds(r, node, "for_s", what, true);
      f.percent = read_percent(r, node, "percent", what);
      break;
    case FaultKind::kDelay:
      r.check_keys(node, {"kind", "at_s", "host", "component", "delay_ms", "jitter_ms", "for_s"}, what);
      f.for_s = seconds(r, node, "for_s", what, true);
      f.delay_ms = read_delay_ms(r, node, "delay_ms", what, true);
      f.jitter_ms = read_delay_ms(r, node, "jitter_ms", what, false);
      if (f.jitter_ms > f.delay_ms) {
        r.fail(node["jitter_ms"],
               fmt::format("{} jitter_ms ({}) must not exceed delay_ms ({})", what, f.jitter_ms, f.delay_ms));
      }
      break;
    case FaultKind::kReorder:
      r.check_keys(node, {"kind", "at_s", "host", "component", "delay_ms", "percent", "for_s"}, what);
      f.for_s = seconds(r, node, "for_s", what, true);
      f.delay_ms = read_delay_ms(r, node, "delay_ms", what, true);
      f.percent = read_percent(r, node, "percent", what);
      if (f.delay_ms <= 0) {
        r.fail(node["delay_ms"],
               what + " delay_ms must be above 0: the packets sent at once overtake the delayed ones");
      }
      break;
    case FaultKind::kPartition:
      r.check_keys(node, {"kind", "at_s", "host", "component", "between", "for_s"}, what);
      f.for_s = seconds(r, node, "for_s", what, true);
      break;
  }
  if (is_network_fault(f.kind)) {
    read_network_target(r, node, what, s, f);
  }
  if (f.kind == FaultKind::kKill || f.kind == FaultKind::kStop) {
    const YAML::Node name = r.field(node, "component", what, true);
    f.component = index_of(components, r.text(name, what + " component"));
    if (f.component < 0) {
      r.fail(name, fmt::format("{} component: no component '{}' in the scenario (components: {})", what, name.Scalar(),
                               fmt::join(components, ", ")));
    }
  }
  if (f.kind == FaultKind::kBurst) {
    const YAML::Node name = r.field(node, "topic", what, true);
    f.topic = index_of(topics, r.text(name, what + " topic"));
    if (f.topic < 0) {
      r.fail(name, fmt::format("{} topic: no topic '{}' in the scenario", what, name.Scalar()));
    }
    const double rate = s.topics[static_cast<std::size_t>(f.topic)].rate_hz * f.factor;
    if (rate > 100'000) {
      r.fail(node["factor"], fmt::format("{} factor: {} Hz is more than a scenario publisher loop can keep "
                                         "(100 kHz)",
                                         what, rate));
    }
  }
  return f;
}

RandomFaults read_random(YamlReader& r, const YAML::Node& node, const Scenario& s) {
  const std::string what = "random";
  r.expect_map(node, what);
  r.check_keys(node, {"seed", "count", "kinds"}, what);
  RandomFaults random;
  random.seed = r.integer(r.field(node, "seed", what, true), "random seed", 0, ~std::uint64_t{0});
  if (const YAML::Node count = node["count"]; count.IsDefined()) {
    random.count = static_cast<std::uint32_t>(r.integer(count, "random count", 1, 1000));
  }
  if (const YAML::Node kinds = node["kinds"]; kinds.IsDefined()) {
    if (!kinds.IsSequence() || kinds.size() == 0) {
      r.fail(kinds,
             "random kinds must be a non-empty list such as [kill, stop, burst], found " + YamlReader::kind_of(kinds));
    }
    random.kinds.clear();
    for (const auto& kind : kinds) {
      random.kinds.push_back(kind_of_name(read_kind_name(r, kind, "random kinds entry")));
      if (is_network_fault(random.kinds.back()) && s.hosts.empty()) {
        r.fail(kind, fmt::format("random kinds: {} acts between virtual hosts, and the scenario's components name "
                                 "no `host:`",
                                 fault_kind_name(random.kinds.back())));
      }
    }
  }
  return random;
}

/// Whether `f` and `g` fault the same component, or the network of the same host, at overlapping times (a host
/// has one NFQUEUE delayer queue, and two network faults on one host would blur what each did).
bool overlaps(const Fault& f, const Fault& g) {
  const bool at_once = f.at_s < g.end_s() && g.at_s < f.end_s();
  const bool same_component = f.component >= 0 && f.component == g.component;
  const bool same_host =
      f.host >= 0 && g.host >= 0 &&
      (f.host == g.host || f.host == g.peer || (f.peer >= 0 && (f.peer == g.host || f.peer == g.peer)));
  return at_once && (same_component || same_host);
}

/// A uniform double in [0, 1) from 53 bits of `rng` (std::uniform_real_distribution is not the same everywhere).
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

double tenths(double value) { return std::round(value * 10) / 10; }

}  // namespace

const char* fault_kind_name(FaultKind kind) noexcept { return kKindNames[static_cast<std::size_t>(kind)].data(); }

bool is_network_fault(FaultKind kind) noexcept {
  return kind == FaultKind::kLoss || kind == FaultKind::kDelay || kind == FaultKind::kReorder ||
         kind == FaultKind::kPartition;
}

std::string Fault::yaml(const Scenario& s) const {
  const std::string host_name = host >= 0 ? s.hosts[static_cast<std::size_t>(host)] : "";
  std::string text = fmt::format("{{at_s: {}, kind: {}", at_s, fault_kind_name(kind));
  switch (kind) {
    case FaultKind::kKill:
      text += fmt::format(", component: {}, restart_after_s: {}",
                          s.components[static_cast<std::size_t>(component)].name, for_s);
      break;
    case FaultKind::kStop:
      text += fmt::format(", component: {}, for_s: {}", s.components[static_cast<std::size_t>(component)].name, for_s);
      break;
    case FaultKind::kBurst:
      text += fmt::format(", topic: {}, factor: {}, for_s: {}", s.topics[static_cast<std::size_t>(topic)].name, factor,
                          for_s);
      break;
    case FaultKind::kCpuHog: text += fmt::format(", for_s: {}", for_s); break;
    case FaultKind::kMemoryPressure: text += fmt::format(", for_s: {}, fill_percent: {}", for_s, fill_percent); break;
    case FaultKind::kShmFull: text += fmt::format(", for_s: {}, leave_mib: {}", for_s, leave_mib); break;
    case FaultKind::kLoss: text += fmt::format(", host: {}, percent: {}, for_s: {}", host_name, percent, for_s); break;
    case FaultKind::kDelay:
      text += fmt::format(", host: {}, delay_ms: {}, jitter_ms: {}, for_s: {}", host_name, delay_ms, jitter_ms, for_s);
      break;
    case FaultKind::kReorder:
      text += fmt::format(", host: {}, delay_ms: {}, percent: {}, for_s: {}", host_name, delay_ms, percent, for_s);
      break;
    case FaultKind::kPartition:
      text += peer < 0 ? fmt::format(", host: {}, for_s: {}", host_name, for_s)
                       : fmt::format(", between: [{}, {}], for_s: {}", host_name,
                                     s.hosts[static_cast<std::size_t>(peer)], for_s);
      break;
  }
  return text + "}";
}

FaultPlan load_fault_plan(const std::string& path, const Scenario& s) {
  YamlReader r(path);
  const YAML::Node root = r.load_file(path);
  FaultPlan plan;
  try {
    if (const YAML::Node faults = root["faults"]; faults.IsDefined() && !faults.IsNull()) {
      if (!faults.IsSequence()) {
        r.fail(faults, "faults must be a list of '- {at_s: 4, kind: kill, component: ...}' entries, found " +
                           YamlReader::kind_of(faults));
      }
      for (std::size_t i = 0; i < faults.size(); ++i) {
        Fault f = read_fault(r, faults[i], i, s);
        for (std::size_t k = 0; k < plan.fixed.size(); ++k) {
          if (overlaps(f, plan.fixed[k])) {
            r.fail(faults[i], f.component >= 0
                                  ? fmt::format("faults #{} overlaps faults #{} on component '{}': one fault per "
                                                "component at a time",
                                                i + 1, k + 1, s.components[static_cast<std::size_t>(f.component)].name)
                                  : fmt::format("faults #{} overlaps faults #{} on the network of host '{}': one "
                                                "network fault per host at a time",
                                                i + 1, k + 1, s.hosts[static_cast<std::size_t>(f.host)]));
          }
        }
        plan.fixed.push_back(f);
      }
    }
    if (const YAML::Node random = root["random"]; random.IsDefined()) {
      plan.random = read_random(r, random, s);
    }
  } catch (const YAML::Exception& e) {
    r.fail(e.mark, e.msg);
  }
  return plan;
}

std::vector<Fault> draw_random_faults(const RandomFaults& random, const Scenario& s, double duration_s) {
  std::mt19937_64 rng(random.seed);
  std::vector<Fault> drawn;
  constexpr int kAttempts = 100;
  for (std::uint32_t n = 0; n < random.count; ++n) {
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      Fault f;
      f.kind = random.kinds[static_cast<std::size_t>(rng() % random.kinds.size())];
      f.at_s = tenths(duration_s * (0.1 + 0.5 * unit(rng)));
      f.for_s = tenths(0.5 + 1.5 * unit(rng));
      switch (f.kind) {
        case FaultKind::kKill:
        case FaultKind::kStop: f.component = static_cast<int>(rng() % s.components.size()); break;
        case FaultKind::kBurst:
          f.topic = static_cast<int>(rng() % s.topics.size());
          f.factor = 10;
          while (f.factor > 1 && s.topics[static_cast<std::size_t>(f.topic)].rate_hz * f.factor > 100'000) {
            f.factor /= 2;
          }
          break;
        case FaultKind::kCpuHog: break;
        case FaultKind::kMemoryPressure: f.fill_percent = 50; break;
        case FaultKind::kShmFull: f.leave_mib = 256; break;
        // Network faults: a host uniform among the scenario's, the figures of docs/reliability.md.
        case FaultKind::kLoss:
          f.host = static_cast<int>(rng() % s.hosts.size());
          f.percent = 10;
          break;
        case FaultKind::kDelay:
          f.host = static_cast<int>(rng() % s.hosts.size());
          f.delay_ms = 20;
          f.jitter_ms = 5;
          break;
        case FaultKind::kReorder:
          f.host = static_cast<int>(rng() % s.hosts.size());
          f.delay_ms = 10;
          f.percent = 25;
          break;
        case FaultKind::kPartition: f.host = static_cast<int>(rng() % s.hosts.size()); break;
      }
      const bool clash = std::any_of(drawn.begin(), drawn.end(), [&](const Fault& g) { return overlaps(f, g); });
      if (!clash && (f.kind != FaultKind::kBurst || f.factor > 1)) {
        drawn.push_back(f);
        break;
      }
    }
  }
  return drawn;
}

std::vector<Fault> schedule_of(const FaultPlan& plan, const Scenario& s, double duration_s) {
  std::vector<Fault> all = plan.fixed;
  if (plan.random) {
    for (const Fault& f : draw_random_faults(*plan.random, s, duration_s)) {
      if (std::none_of(all.begin(), all.end(), [&](const Fault& g) { return overlaps(f, g); })) {
        all.push_back(f);
      }
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Fault& a, const Fault& b) { return a.at_s < b.at_s; });
  return all;
}

std::string check_schedule_fits(const std::vector<Fault>& faults, double duration_s, double settle_s) {
  for (const Fault& f : faults) {
    if (f.end_s() + settle_s > duration_s) {
      return fmt::format(
          "a {} fault at {} s ends at {} s, less than {} s before the measured window ends ({} s): "
          "lengthen the run (--duration) or move the fault earlier",
          fault_kind_name(f.kind), f.at_s, f.end_s(), settle_s, duration_s);
    }
  }
  return "";
}

}  // namespace axon_bench
