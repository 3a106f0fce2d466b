#include "results/result_log.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <type_traits>

#include "results/table.hpp"

#ifndef AXON_BENCH_GIT_REVISION
#define AXON_BENCH_GIT_REVISION "unknown"
#endif

namespace axon_bench {
namespace {

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string number(double value) {
  if (!std::isfinite(value)) {
    return "null";
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

std::string number(const std::optional<double>& value) { return value ? number(*value) : "null"; }

/// Writes one JSON object's members, separating them with commas.
class ObjectWriter {
 public:
  ObjectWriter(std::string& out, const char* indent) : out_(out), indent_(indent) { out_ += "{"; }
  void raw(const char* key, const std::string& json_value) {
    out_ += first_ ? "\n" : ",\n";
    first_ = false;
    out_ += indent_;
    out_ += "  \"";
    out_ += key;
    out_ += "\": ";
    out_ += json_value;
  }
  void text(const char* key, const std::string& value) { raw(key, quote(value)); }
  void num(const char* key, double value) { raw(key, number(value)); }
  void num(const char* key, const std::optional<double>& value) { raw(key, number(value)); }
  void integer(const char* key, std::uint64_t value) { raw(key, std::to_string(value)); }
  void close() {
    out_ += "\n";
    out_ += indent_;
    out_ += "}";
  }

 private:
  std::string& out_;
  const char* indent_;
  bool first_ = true;
};

template <class Int>
std::string integer_or_null(const std::optional<Int>& value) {
  return value ? std::to_string(*value) : "null";
}

std::string text_or_null(const std::optional<std::string>& value) { return value ? quote(*value) : "null"; }

template <class Number>
std::string array(const std::vector<Number>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += i == 0 ? "" : ", ";
    if constexpr (std::is_floating_point_v<Number>) {
      out += number(values[i]);
    } else {
      out += std::to_string(values[i]);
    }
  }
  return out + "]";
}

/// Buckets as [lower_ns, upper_ns, count] triples, one line.
std::string histogram_json(const std::vector<HistogramBucket>& buckets) {
  std::string out = "[";
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    out += i == 0 ? "[" : ", [";
    out += number(buckets[i].lower_ns) + ", " + number(buckets[i].upper_ns) + ", " + std::to_string(buckets[i].count);
    out += "]";
  }
  return out + "]";
}

std::string case_json(const CaseResult& c) {
  std::string out;
  ObjectWriter o(out, "    ");
  const bool lat = c.has_latency;
  auto latency_num = [&](const char* key, double value) { o.raw(key, lat ? number(value) : "null"); };
  o.text("mode", c.json_mode());
  o.text("pattern", c.mode);
  o.text("transport", c.transport);
  o.text("serializer", c.serializer);
  o.text("wait_strategy", c.wait_strategy);
  o.raw("message", c.message.empty() ? "null" : quote(c.message));
  o.integer("payload_bytes", c.payload_bytes);
  o.raw("touch", c.touch ? "true" : "false");
  o.num("rate_hz", c.rate_hz);
  if (lat) {
    o.integer("samples", c.latency.samples);
  } else {
    o.raw("samples", c.messages > 0 ? std::to_string(c.messages) : "null");
  }
  latency_num("mean_ns", c.latency.mean_ns);
  latency_num("stddev_ns", c.latency.stddev_ns);
  latency_num("min_ns", c.latency.min_ns);
  latency_num("p50_ns", c.latency.p50_ns);
  latency_num("p90_ns", c.latency.p90_ns);
  latency_num("p99_ns", c.latency.p99_ns);
  latency_num("p999_ns", c.latency.p999_ns);
  latency_num("p9999_ns", c.latency.p9999_ns);
  latency_num("max_ns", c.latency.max_ns);
  o.num("msgs_per_s", c.msgs_per_s);
  o.num("mb_per_s", c.mb_per_s);
  o.num("cpu_percent", c.cpu_percent);
  o.num("cpu_percent_sender", c.cpu_percent_sender);
  o.num("cpu_percent_receiver", c.cpu_percent_receiver);
  o.raw("cpu_percent_per_process", c.cpu_percent_per_process.empty() ? "null" : array(c.cpu_percent_per_process));
  o.num("ratio_to_raw_p50", c.ratio_to_raw_p50);
  o.num("ratio_to_raw64_p50", c.ratio_to_raw64_p50);
  o.num("ratio_to_memcpy", c.ratio_to_memcpy);
  o.num("ratio_to_busy_spin_p50", c.ratio_to_busy_spin_p50);
  o.num("ratio_to_futex_p50", c.ratio_to_futex_p50);
  o.num("ratio_to_raw_udp", c.ratio_to_raw_udp);
  o.num("ratio_to_perftest", c.ratio_to_perftest);
  o.num("ratio_to_send_lat", c.ratio_to_send_lat);
  o.num("ratio_to_floor", c.ratio_to_floor);
  o.integer("dropped", c.dropped);
  o.raw("subscribers", integer_or_null(c.subscribers));
  o.raw("received_per_subscriber", c.received_per_subscriber.empty() ? "null" : array(c.received_per_subscriber));
  o.raw("topic", text_or_null(c.topic));
  o.raw("component", text_or_null(c.component));
  o.raw("expected", integer_or_null(c.expected));
  o.raw("published", integer_or_null(c.published));
  o.raw("delivered", integer_or_null(c.delivered));
  o.raw("lost", integer_or_null(c.lost));
  o.raw("histogram", lat ? histogram_json(c.latency.histogram) : "null");
  o.close();
  return out;
}

}  // namespace

std::string CaseResult::json_mode() const { return benchmark == "baseline" ? "baseline:" + transport : benchmark; }

std::string CaseResult::label() const {
  std::string name;
  const std::string size = format_bytes(payload_bytes);
  if (benchmark == "scenario") {
    name = topic ? *topic + " -> " + component.value_or("?") : "cpu " + component.value_or("?");
  } else if (benchmark == "throughput") {
    name = "throughput " + size + " x" + std::to_string(subscribers.value_or(0));
    if (serializer != "raw") {
      name += " " + serializer;
    }
  } else if (benchmark == "wakeup") {
    name = "wakeup " + wait_strategy + " " + (mode == "idle" ? "idle" : size);
  } else if (benchmark == "domain") {
    name = mode + " " + message;
  } else if (benchmark == "baseline") {
    name = "baseline " + transport + " " + mode + " " + size;
  } else if (!message.empty()) {
    name = serializer + " " + message + " " + size + " " + mode;
  } else {
    name = transport + " " + mode + " " + size;
  }
  if (touch) {
    name += " touch";
  }
  if (rate_hz > 0 && benchmark != "scenario") {
    name += format(" @%.0f Hz", rate_hz);
  }
  return name;
}

RunInfo RunInfo::collect(int argc, char** argv) {
  RunInfo info;
  for (int i = 0; i < argc; ++i) {
    info.command_line += (i == 0 ? "" : " ");
    info.command_line += argv[i];
  }
  info.git_revision = AXON_BENCH_GIT_REVISION;
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &utc);
  info.date_utc = date;
  info.machine = machine_info();
  return info;
}

std::string to_json(const ResultLog& log) {
  std::string out;
  ObjectWriter top(out, "");
  top.text("tool", "axon-bench");
  top.text("git_revision", log.run.git_revision);
  top.text("date_utc", log.run.date_utc);
  top.text("command_line", log.run.command_line);
  {
    std::string machine;
    ObjectWriter m(machine, "  ");
    m.text("cpu_model", log.run.machine.cpu_model);
    m.integer("cores", static_cast<std::uint64_t>(log.run.machine.cores));
    m.text("kernel", log.run.machine.kernel);
    m.close();
    top.raw("machine", machine);
  }
  {
    std::string cpus = "[";
    for (std::size_t i = 0; i < log.run.cpus.size(); ++i) {
      cpus += i == 0 ? "" : ", ";
      cpus += std::to_string(log.run.cpus[i]);
    }
    top.raw("cpus", cpus + "]");
  }
  {
    std::string notes = "[";
    for (std::size_t i = 0; i < log.run.notes.size(); ++i) {
      notes += i == 0 ? "" : ", ";
      notes += quote(log.run.notes[i]);
    }
    top.raw("notes", notes + "]");
  }
  std::string cases = "[";
  for (std::size_t i = 0; i < log.cases.size(); ++i) {
    cases += (i == 0 ? "\n    " : ",\n    ") + case_json(log.cases[i]);
  }
  top.raw("results", cases + (log.cases.empty() ? "]" : "\n  ]"));
  if (log.chaos) {
    top.raw("chaos", chaos_json(*log.chaos));
  }
  top.close();
  return out + "\n";
}

std::string write_json(const ResultLog& log, const std::string& path) { return write_text_file(path, to_json(log)); }

std::string json_string(const std::string& text) { return quote(text); }

std::string json_number(double value) { return number(value); }

std::string write_text_file(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return {};
  }
  std::ofstream file(path, std::ios::trunc);
  file << text;
  file.close();
  if (!file) {
    return "cannot write " + path + ": " + error_text(errno);
  }
  return {};
}

}  // namespace axon_bench
