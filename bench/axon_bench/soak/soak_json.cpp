#include <cstdio>

#include "results/table.hpp"
#include "soak/soak_result.hpp"

namespace axon_bench {
namespace {

const char* rule_name(SoakRule rule) {
  switch (rule) {
    case SoakRule::kMemory: return "memory";
    case SoakRule::kNoGrowth: return "no_growth";
    case SoakRule::kNoLoss: return "no_loss";
  }
  return "?";
}

std::string verdict_members(const SoakVerdict& v) {
  return "\"pass\": " + std::string(v.pass ? "true" : "false") + ", \"judged\": " + (v.judged ? "true" : "false") +
         ", \"figures\": " + json_string(v.figures);
}

std::string windows_json(const SoakTopicLatency& t, double window_s) {
  std::string out = "[";
  for (std::size_t w = 0; w < t.windows.size(); ++w) {
    const WindowPercentiles& p = t.windows[w];
    out += w == 0 ? "\n" : ",\n";
    out += format(
        "        {\"start_s\": %g, \"end_s\": %g, \"count\": %llu, \"p50_ns\": %s, \"p99_ns\": %s, "
        "\"p999_ns\": %s, \"max_ns\": %s}",
        static_cast<double>(w) * window_s, static_cast<double>(w + 1) * window_s,
        static_cast<unsigned long long>(p.count), json_number(p.p50_ns).c_str(), json_number(p.p99_ns).c_str(),
        json_number(p.p999_ns).c_str(), json_number(p.max_ns).c_str());
  }
  return out + "]";
}

}  // namespace

std::string soak_json(const SoakResult& r) {
  const SoakSeriesSet& set = *r.series;
  std::string out = "{\n";
  out += "  \"tool\": \"axon-bench soak\",\n";
  out += "  \"git_revision\": " + json_string(r.run.git_revision) + ",\n";
  out += "  \"date_utc\": " + json_string(r.run.date_utc) + ",\n";
  out += "  \"command_line\": " + json_string(r.run.command_line) + ",\n";
  out += "  \"machine\": {\"cpu_model\": " + json_string(r.run.machine.cpu_model) +
         ", \"cores\": " + std::to_string(r.run.machine.cores) + ", \"kernel\": " + json_string(r.run.machine.kernel) +
         "},\n";
  out += "  \"scenario\": " + json_string(r.scenario_file) + ",\n";
  out += "  \"scenario_name\": " + json_string(r.scenario_name) + ",\n";
  out += format("  \"domain\": %u,\n  \"duration_s\": %g,\n  \"interval_s\": %g,\n  \"window_s\": %g,\n", r.domain_id,
                r.duration_s, r.interval_s, r.window_s);
  const SoakBounds& b = r.bounds;
  out += format(
      "  \"bounds\": {\"warmup_s\": %g, \"reference_s\": %g, \"memory_slope_kib_per_min\": %g, "
      "\"memory_growth_floor_kib\": %g, \"memory_growth_fraction\": %g, \"latency_p99_ratio\": %g, "
      "\"latency_floor_ns\": %g},\n",
      b.warmup_s, b.reference_s, b.memory_slope_kib_per_min, b.memory_growth_floor_kib, b.memory_growth_fraction,
      b.latency_p99_ratio, b.latency_floor_ns);
  out += "  \"verdict\": " + json_string(r.pass() ? "PASS" : "FAIL") + ",\n  \"failed\": [";
  const auto failed = r.failed();
  for (std::size_t i = 0; i < failed.size(); ++i) {
    out += i == 0 ? "" : ", ";
    out += json_string(failed[i]);
  }
  out += "],\n  \"processes\": [";
  for (std::size_t i = 0; i < r.processes.size(); ++i) {
    out += i == 0 ? "" : ", ";
    out += format("{\"name\": %s, \"pid\": %d}", json_string(r.processes[i].name).c_str(), r.processes[i].pid);
  }
  out += "],\n  \"problems\": [";
  bool first = true;
  for (const auto& [what, samples] : r.problems) {
    out += first ? "" : ", ";
    out += format("{\"what\": %s, \"samples\": %llu}", json_string(what).c_str(),
                  static_cast<unsigned long long>(samples));
    first = false;
  }
  out += "],\n  \"times_s\": [";
  const auto times = set.times_s();
  for (std::size_t i = 0; i < times.size(); ++i) {
    out += i == 0 ? "" : ",";
    out += format("%.3f", times[i]);
  }
  out += "],\n  \"series\": [";
  for (std::size_t k = 0; k < set.series().size(); ++k) {
    const SoakSeries& s = set.series()[k];
    out += k == 0 ? "\n" : ",\n";
    out += "    {\"name\": " + json_string(s.name()) + ", \"process\": " + json_string(s.process) +
           ", \"metric\": " + json_string(s.metric) + ", \"detail\": " + json_string(s.detail) + ", \"rule\": \"" +
           rule_name(s.rule) + "\", " + verdict_members(s.verdict) + ",\n     \"values\": [";
    const auto values = set.values_of(s);
    for (std::size_t i = 0; i < values.size(); ++i) {
      out += i == 0 ? "" : ",";
      out += json_number(values[i]);
    }
    out += "]}";
  }
  out += "\n  ],\n  \"latency\": {\n    \"overall\": {" + verdict_members(r.overall.verdict) +
         ",\n      \"windows\": " + windows_json(r.overall, r.window_s) + "},\n    \"topics\": [";
  for (std::size_t k = 0; k < r.topics.size(); ++k) {
    const SoakTopicLatency& t = r.topics[k];
    out += k == 0 ? "\n" : ",\n";
    out += "      {\"topic\": " + json_string(t.topic) + ", " + verdict_members(t.verdict) +
           ",\n       \"windows\": " + windows_json(t, r.window_s) + "}";
  }
  out += "\n    ]\n  }\n}\n";
  return out;
}

bool SoakResult::pass() const { return failed().empty(); }

std::vector<std::string> SoakResult::failed() const {
  std::vector<std::string> names;
  for (const SoakSeries& s : series->series()) {
    if (!s.verdict.pass) {
      names.push_back(s.name());
    }
  }
  for (const SoakTopicLatency* t : latencies()) {
    if (!t->verdict.pass) {
      names.push_back("latency " + t->topic);
    }
  }
  return names;
}

std::vector<const SoakTopicLatency*> SoakResult::latencies() const {
  std::vector<const SoakTopicLatency*> all;
  for (const auto& t : topics) {
    all.push_back(&t);
  }
  all.push_back(&overall);
  return all;
}

}  // namespace axon_bench
