#include "results/json_input.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace axon_bench {
namespace {

bool present(const YAML::Node& node) { return node.IsDefined() && !node.IsNull(); }

std::string text_of(const YAML::Node& map, const char* key, const std::string& fallback = "") {
  const YAML::Node value = map[key];
  return present(value) && value.IsScalar() ? value.Scalar() : fallback;
}

std::optional<double> number_of(const YAML::Node& map, const char* key) {
  const YAML::Node value = map[key];
  double number = 0;
  if (present(value) && value.IsScalar() && YAML::convert<double>::decode(value, number)) {
    return number;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> count_of(const YAML::Node& map, const char* key) {
  const auto value = number_of(map, key);
  return value && *value >= 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*value)) : std::nullopt;
}

CaseResult case_of(const YAML::Node& r) {
  CaseResult c;
  const std::string mode = text_of(r, "mode");
  c.benchmark = mode.starts_with("baseline:") ? "baseline" : mode;
  c.mode = text_of(r, "pattern");
  c.transport = text_of(r, "transport");
  c.serializer = text_of(r, "serializer");
  c.wait_strategy = text_of(r, "wait_strategy");
  c.message = text_of(r, "message");
  c.payload_bytes = count_of(r, "payload_bytes").value_or(0);
  c.touch = text_of(r, "touch") == "true";
  c.rate_hz = number_of(r, "rate_hz").value_or(0);
  c.has_latency = number_of(r, "p50_ns").has_value();
  if (c.has_latency) {
    LatencySummary& l = c.latency;
    l.samples = count_of(r, "samples").value_or(0);
    l.mean_ns = number_of(r, "mean_ns").value_or(0);
    l.stddev_ns = number_of(r, "stddev_ns").value_or(0);
    l.min_ns = number_of(r, "min_ns").value_or(0);
    l.p50_ns = number_of(r, "p50_ns").value_or(0);
    l.p90_ns = number_of(r, "p90_ns").value_or(0);
    l.p99_ns = number_of(r, "p99_ns").value_or(0);
    l.p999_ns = number_of(r, "p999_ns").value_or(0);
    l.p9999_ns = number_of(r, "p9999_ns").value_or(0);
    l.max_ns = number_of(r, "max_ns").value_or(0);
    if (const YAML::Node h = r["histogram"]; h.IsSequence()) {
      for (const auto& b : h) {
        if (b.IsSequence() && b.size() == 3) {
          l.histogram.push_back({b[0].as<double>(), b[1].as<double>(), b[2].as<std::uint64_t>()});
        }
      }
    }
  } else {
    c.messages = count_of(r, "samples").value_or(0);
  }
  c.msgs_per_s = number_of(r, "msgs_per_s");
  c.mb_per_s = number_of(r, "mb_per_s");
  c.cpu_percent = number_of(r, "cpu_percent");
  c.cpu_percent_sender = number_of(r, "cpu_percent_sender");
  c.cpu_percent_receiver = number_of(r, "cpu_percent_receiver");
  if (const YAML::Node v = r["cpu_percent_per_process"]; v.IsSequence()) {
    for (const auto& x : v) {
      c.cpu_percent_per_process.push_back(x.as<double>());
    }
  }
  c.ratio_to_raw_p50 = number_of(r, "ratio_to_raw_p50");
  c.ratio_to_raw64_p50 = number_of(r, "ratio_to_raw64_p50");
  c.ratio_to_memcpy = number_of(r, "ratio_to_memcpy");
  c.ratio_to_raw_udp = number_of(r, "ratio_to_raw_udp");
  c.ratio_to_perftest = number_of(r, "ratio_to_perftest");
  c.ratio_to_send_lat = number_of(r, "ratio_to_send_lat");
  c.ratio_to_floor = number_of(r, "ratio_to_floor");
  c.ratio_to_busy_spin_p50 = number_of(r, "ratio_to_busy_spin_p50");
  c.ratio_to_futex_p50 = number_of(r, "ratio_to_futex_p50");
  c.dropped = count_of(r, "dropped").value_or(0);
  if (const auto n = count_of(r, "subscribers")) {
    c.subscribers = static_cast<std::uint32_t>(*n);
  }
  if (const YAML::Node v = r["received_per_subscriber"]; v.IsSequence()) {
    for (const auto& x : v) {
      c.received_per_subscriber.push_back(x.as<std::uint64_t>());
    }
  }
  if (present(r["topic"])) {
    c.topic = text_of(r, "topic");
  }
  if (present(r["component"])) {
    c.component = text_of(r, "component");
  }
  c.expected = count_of(r, "expected");
  c.published = count_of(r, "published");
  c.delivered = count_of(r, "delivered");
  c.lost = count_of(r, "lost");
  return c;
}

}  // namespace

ResultLog parse_results_json(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(source + ":" + std::to_string(e.mark.line + 1) + ": not valid JSON: " + e.msg);
  }
  if (!root.IsMap() || text_of(root, "tool") != "axon-bench" || !root["results"].IsSequence()) {
    throw std::runtime_error(source + ": not an axon-bench result file (no \"tool\": \"axon-bench\" and \"results\")");
  }
  ResultLog log;
  try {
    log.run.command_line = text_of(root, "command_line");
    log.run.git_revision = text_of(root, "git_revision", "unknown");
    log.run.date_utc = text_of(root, "date_utc");
    if (const YAML::Node m = root["machine"]; m.IsMap()) {
      log.run.machine.cpu_model = text_of(m, "cpu_model");
      log.run.machine.cores = static_cast<int>(count_of(m, "cores").value_or(0));
      log.run.machine.kernel = text_of(m, "kernel");
    }
    if (const YAML::Node cpus = root["cpus"]; cpus.IsSequence()) {
      for (const auto& cpu : cpus) {
        log.run.cpus.push_back(cpu.as<int>());
      }
    }
    if (const YAML::Node notes = root["notes"]; notes.IsSequence()) {
      for (const auto& note : notes) {
        log.run.notes.push_back(note.as<std::string>());
      }
    }
    for (const auto& record : root["results"]) {
      log.cases.push_back(case_of(record));
    }
    log.chaos = chaos_of(root["chaos"]);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(source + ":" + std::to_string(e.mark.line + 1) + ": unexpected value: " + e.msg);
  }
  return log;
}

ResultLog read_results_json(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    throw std::runtime_error(path + ": cannot open the result file");
  }
  std::ostringstream text;
  text << file.rdbuf();
  return parse_results_json(text.str(), path);
}

}  // namespace axon_bench
