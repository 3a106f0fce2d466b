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
constexpr std::array<std::string_view, 6> kKindNames = {"kill",    "stop", "burst", "cpu_hog", "memory_pressure",
                                                        "shm_full"};

/// A fault kind's name read from `node`: one of kKindNames.
std::string_view read_kind_name(YamlReader& r, const YAML::Node& node, const std::string& what) {
  const std::string name = r.choice(node, what, {"kill", "stop", "burst", "cpu_hog", "memory_pressure", "shm_full"});
  return *std::find(kKindNames.begin(), kKindNames.end(), name);
}
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

RandomFaults read_random(YamlReader& r, const YAML::Node& node) {
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
    }
  }
  return random;
}

/// Whether `f` and `g` fault the same component at overlapping times.
bool overlaps(const Fault& f, const Fault& g) {
  return f.component >= 0 && f.component == g.component && f.at_s < g.end_s() && g.at_s < f.end_s();
}

/// A uniform double in [0, 1) from 53 bits of `rng` (std::uniform_real_distribution is not the same everywhere).
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

double tenths(double value) { return std::round(value * 10) / 10; }

}  // namespace

const char* fault_kind_name(FaultKind kind) noexcept { return kKindNames[static_cast<std::size_t>(kind)].data(); }

std::string Fault::yaml(const Scenario& s) const {
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
            r.fail(faults[i], fmt::format("faults #{} overlaps faults #{} on component '{}': one fault per "
                                          "component at a time",
                                          i + 1, k + 1, s.components[static_cast<std::size_t>(f.component)].name));
          }
        }
        plan.fixed.push_back(f);
      }
    }
    if (const YAML::Node random = root["random"]; random.IsDefined()) {
      plan.random = read_random(r, random);
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
