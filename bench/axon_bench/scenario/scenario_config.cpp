#include "scenario/scenario_config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string_view>

#include "scenario/scenario_yaml.hpp"

namespace axon_bench {
namespace {

/// The ring capacity of the shared-memory transport (kRingCapacity).
constexpr std::uint32_t kMaxDepth = 256;
/// Components are processes with a node each (the registry has 64
/// participants; keep room for other users of the domain).
constexpr std::size_t kMaxComponents = 48;
/// Publishers per node (the default pool.publishers of the shared-memory transport).
constexpr std::size_t kMaxPublishesPerComponent = 32;

ScenarioTopic read_topic(YamlReader& r, const YAML::Node& node, std::size_t index) {
  const std::string where = "topic #" + std::to_string(index + 1);
  r.expect_map(node, where);
  r.check_keys(node, {"name", "payload", "rate_hz", "depth", "overflow", "phase_ms", "touch", "reliable"}, where);
  ScenarioTopic t;
  t.line = node.Mark().line + 1;
  t.name = r.text(r.field(node, "name", where, true), where + " name");
  const std::string what = "topic '" + t.name + "'";
  t.configured_bytes = r.size(r.field(node, "payload", what, true), what + " payload");
  t.payload_bytes = round_up_payload(t.configured_bytes);
  t.rate_hz = r.positive(r.field(node, "rate_hz", what, true), what + " rate_hz");
  if (t.rate_hz > 100'000) {
    r.fail(node["rate_hz"], what + " rate_hz is above 100 kHz, more than a scenario publisher loop can keep");
  }
  if (const YAML::Node depth = node["depth"]; depth.IsDefined()) {
    t.depth = static_cast<std::uint32_t>(r.integer(depth, what + " depth", 1, kMaxDepth));
  }
  if (const YAML::Node overflow = node["overflow"]; overflow.IsDefined()) {
    const std::string value = r.text(overflow, what + " overflow");
    if (value != "reject_newest" && value != "block_publisher") {
      r.fail(overflow, what + " overflow must be reject_newest or block_publisher, found '" + value + "'");
    }
    t.block_publisher = value == "block_publisher";
  }
  if (const YAML::Node phase = node["phase_ms"]; phase.IsDefined()) {
    t.phase_ms = r.number(phase, what + " phase_ms");
    if (t.phase_ms < 0 || t.phase_ms * 1e-3 >= 1.0 / t.rate_hz) {
      r.fail(phase,
             what + " phase_ms must be >= 0 and below one period (" + std::to_string(1000.0 / t.rate_hz) + " ms)");
    }
  }
  if (const YAML::Node touch = node["touch"]; touch.IsDefined()) {
    t.touch = r.boolean(touch, what + " touch");
  }
  if (const YAML::Node reliable = node["reliable"]; reliable.IsDefined()) {
    t.reliable = r.boolean(reliable, what + " reliable");
    if (t.reliable && node["overflow"].IsDefined() && !t.block_publisher) {
      r.fail(node["overflow"], what +
                                   " is reliable: a reliable queue never drops, so its overflow is "
                                   "block_publisher (leave overflow out or set reliable: false)");
    }
    t.block_publisher = t.block_publisher || t.reliable;
  }
  return t;
}

ScenarioComponent read_component(YamlReader& r, const YAML::Node& node, std::size_t index,
                                 const std::map<std::string, int>& topics, std::vector<std::string>& hosts) {
  const std::string where = "component #" + std::to_string(index + 1);
  r.expect_map(node, where);
  r.check_keys(node, {"name", "publishes", "subscribes", "cpu", "host"}, where);
  ScenarioComponent c;
  c.line = node.Mark().line + 1;
  c.name = r.text(r.field(node, "name", where, true), where + " name");
  const std::string what = "component '" + c.name + "'";
  if (const YAML::Node pubs = node["publishes"]; pubs.IsDefined() && !pubs.IsNull()) {
    c.publishes = r.topic_list(pubs, topics, what + " publishes");
    if (c.publishes.size() > kMaxPublishesPerComponent) {
      r.fail(pubs, what + " publishes " + std::to_string(c.publishes.size()) + " topics; at most " +
                       std::to_string(kMaxPublishesPerComponent) + " per component");
    }
  }
  if (const YAML::Node subs = node["subscribes"]; subs.IsDefined() && !subs.IsNull()) {
    c.subscribes = r.topic_list(subs, topics, what + " subscribes");
  }
  if (const YAML::Node cpu = node["cpu"]; cpu.IsDefined()) {
    c.cpu = static_cast<int>(r.integer(cpu, what + " cpu", 0, 4095));
  }
  if (c.publishes.empty() && c.subscribes.empty()) {
    r.fail(node, what + " neither publishes nor subscribes anything");
  }
  if (const YAML::Node host = node["host"]; host.IsDefined()) {
    const std::string name = r.text(host, what + " host");
    const bool plain = !name.empty() && name.size() <= 15 && std::all_of(name.begin(), name.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == '-';
    });
    if (!plain) {
      r.fail(host, what + " host '" + name + "': a host name is 1 to 15 letters, digits, '_' or '-'");
    }
    const auto at = std::find(hosts.begin(), hosts.end(), name);
    c.host = static_cast<int>(at - hosts.begin());
    if (at == hosts.end()) {
      hosts.push_back(name);
    }
  }
  return c;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) {
    text += (text.empty() ? "" : ", ") + name;
  }
  return text;
}

/// Virtual hosts: every component names one or none does, and 2..8 of them (what VirtualHosts makes).
void check_hosts(YamlReader& r, const YAML::Node& components, const Scenario& s) {
  if (s.hosts.empty()) {
    return;
  }
  for (std::size_t i = 0; i < s.components.size(); ++i) {
    if (s.components[i].host < 0) {
      r.fail(components[i], "component '" + s.components[i].name +
                                "' has no host: other components run on virtual hosts, so every component needs "
                                "`host:` (one of " +
                                joined(s.hosts) + ")");
    }
  }
  if (s.hosts.size() < kScenarioMinHosts || s.hosts.size() > kScenarioMaxHosts) {
    r.fail(components, "the components name " + std::to_string(s.hosts.size()) + " host(s) (" + joined(s.hosts) +
                           "): virtual hosts run " + std::to_string(kScenarioMinHosts) + " to " +
                           std::to_string(kScenarioMaxHosts) + " (leave `host:` out to run on one machine)");
  }
}

}  // namespace

std::uint64_t round_up_payload(std::uint64_t bytes) {
  std::uint64_t size = kScenarioMinPayloadBytes;
  while (size < bytes) {
    size <<= 1;
  }
  return size;
}

BenchWait parse_scenario_wait(const std::string& text, std::uint32_t sleep_us) {
  BenchWait wait = parse_wait(text, sleep_us);
  if (wait.executor && wait.strategy.kind() != axon::WaitStrategy::Kind::kBlocking) {
    throw std::invalid_argument("wait '" + text + "': use blocking, busy-poll, yield or sleep");
  }
  return wait;
}

Scenario load_scenario(const std::string& path) {
  YamlReader r(path);
  const YAML::Node root = r.load_file(path);
  if (root.IsNull() || !root.IsDefined()) {
    r.fail(YAML::Mark(), "the file is empty; expected a mapping with 'topics' and 'components'");
  }
  Scenario s;
  s.file = path;
  try {
    r.expect_map(root, "the scenario");
    // faults and random: the fault schedule `axon-bench chaos` reads (chaos/fault_schedule.cpp); `scenario` runs
    // the same file without faults.
    r.check_keys(root,
                 {"name", "description", "duration_s", "warmup_s", "wait", "sleep_us", "topics", "components", "faults",
                  "random"},
                 "the scenario");
    if (const YAML::Node name = root["name"]; name.IsDefined()) {
      s.name = r.text(name, "name");
    }
    if (const YAML::Node description = root["description"]; description.IsDefined()) {
      s.description = r.text(description, "description");
    }
    if (const YAML::Node duration = root["duration_s"]; duration.IsDefined()) {
      s.duration_s = r.positive(duration, "duration_s");
    }
    if (const YAML::Node warmup = root["warmup_s"]; warmup.IsDefined()) {
      s.warmup_s = r.number(warmup, "warmup_s");
      if (s.warmup_s < 0) {
        r.fail(warmup, "warmup_s must be >= 0");
      }
    }
    if (const YAML::Node wait = root["wait"]; wait.IsDefined()) {
      const std::string value = r.text(wait, "wait");
      try {
        s.wait = parse_scenario_wait(value, s.wait.sleep_us);
      } catch (const std::invalid_argument&) {
        r.fail(wait, "wait '" + value + "': use blocking (the default), busy-poll, yield or sleep");
      }
    }
    if (const YAML::Node sleep = root["sleep_us"]; sleep.IsDefined()) {
      s.wait.sleep_us = static_cast<std::uint32_t>(r.integer(sleep, "sleep_us", 1, 1'000'000));
    }

    const YAML::Node topics = r.field(root, "topics", "the scenario", true);
    if (!topics.IsSequence() || topics.size() == 0) {
      r.fail(topics, "topics must be a non-empty list of '- name: ...' entries, found " + YamlReader::kind_of(topics));
    }
    std::map<std::string, int> topic_index;
    for (std::size_t i = 0; i < topics.size(); ++i) {
      ScenarioTopic t = read_topic(r, topics[i], i);
      if (!topic_index.emplace(t.name, static_cast<int>(i)).second) {
        r.fail(topics[i]["name"], "topic '" + t.name + "' is defined twice");
      }
      s.topics.push_back(std::move(t));
    }

    const YAML::Node components = r.field(root, "components", "the scenario", true);
    if (!components.IsSequence() || components.size() == 0) {
      r.fail(components,
             "components must be a non-empty list of '- name: ...' entries, found " + YamlReader::kind_of(components));
    }
    if (components.size() > kMaxComponents) {
      r.fail(components, "at most " + std::to_string(kMaxComponents) + " components (processes)");
    }
    std::set<std::string> component_names;
    for (std::size_t i = 0; i < components.size(); ++i) {
      ScenarioComponent c = read_component(r, components[i], i, topic_index, s.hosts);
      if (!component_names.insert(c.name).second) {
        r.fail(components[i]["name"], "component '" + c.name + "' is defined twice");
      }
      const int self = static_cast<int>(i);
      for (std::size_t k = 0; k < c.publishes.size(); ++k) {
        ScenarioTopic& t = s.topics[static_cast<std::size_t>(c.publishes[k])];
        if (t.publisher >= 0) {
          r.fail(components[i]["publishes"][k], "topic '" + t.name + "' is already published by component '" +
                                                    s.components[static_cast<std::size_t>(t.publisher)].name +
                                                    "'; a topic has one publisher in a scenario");
        }
        t.publisher = self;
      }
      for (const int topic : c.subscribes) {
        s.topics[static_cast<std::size_t>(topic)].subscribers.push_back(self);
      }
      s.components.push_back(std::move(c));
    }
    check_hosts(r, components, s);
    for (std::size_t i = 0; i < s.topics.size(); ++i) {
      if (s.topics[i].publisher < 0) {
        r.fail(topics[i], "topic '" + s.topics[i].name + "' is not published by any component");
      }
    }
  } catch (const YAML::Exception& e) {
    r.fail(e.mark, e.msg);
  }
  return s;
}

}  // namespace axon_bench
