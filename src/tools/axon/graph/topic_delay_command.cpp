// `axon topic delay TOPIC`: each subscriber's latency from publish to take(), as its node's live statistics keep
// it, looked at once a second until Ctrl-C, --duration or --count.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "src/base/clock.hpp"
#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/graph/domain_text.hpp"
#include "src/tools/axon/graph/rounds.hpp"
#include "src/tools/axon/text_table.hpp"

namespace axon::tools {
namespace {

std::string us_text(std::uint64_t ns) { return fmt::format("{:.2f}", static_cast<double>(ns) / 1e3); }

class TopicDelayCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("delay", "Each subscriber's latency from publish to take (p50 ... max)");
    sub->add_option("topic", topic_, "The topic's name, as `axon topic list` prints it")->required();
    rounds_.add_to(*sub);
    sub->footer(
        "Latency from each message's publish time to its take(), over the last 10 s or so that each node's "
        "statistics segment keeps (docs/design/live-stats.md): percentiles in microseconds, the upper edges of "
        "log buckets (two per power of two). COUNT is the takes measured in that window (all of a stream of up to "
        "100 kHz per publisher, a sample of faster ones). Read without any lock and without joining the domain. "
        "With --json, one document when it stops. Exit status: 0, 1 when the statistics cannot be read, 2 on a "
        "usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    const StopOnSignals stop;
    JsonWriter json;
    json.begin_object().member("domain", globals.domain_id).member("topic", topic_).key("rounds").begin_array();
    auto ran = rounds_.run([&](std::int64_t start_ns) -> Result<void> {
      std::vector<std::string> problems;
      auto latency = read_topic_latency(DomainAddress{.domain_id = globals.domain_id, .shm_dir = {}}, topic_, problems);
      if (!latency) {
        return latency.error();
      }
      const double at_s = static_cast<double>(monotonic_now_ns() - start_ns) / 1e9;
      if (globals.json) {
        add_json(json, at_s, *latency, problems);
      } else {
        print(out, text_of(at_s, *latency, problems));
        std::fflush(out);
      }
      return {};
    });
    if (!ran) {
      return report_error(ran.error());
    }
    json.end_array().end_object();
    if (globals.json) {
      print(out, json.text() + "\n");
    }
    return kExitOk;
  }

 private:
  [[nodiscard]] std::string text_of(double at_s, const std::vector<SubscriberLatencyView>& subscribers,
                                    const std::vector<std::string>& problems) const {
    std::string text = fmt::format("t={:.1f}s topic {} (microseconds)\n", at_s, topic_);
    if (subscribers.empty()) {
      text += "no subscriber of it on this host\n";
    } else {
      TextTable table({"NODE", "PID", "TAKEN", "COUNT", "P50", "P90", "P99", "P99.9", "MAX", "MEAN"});
      for (std::size_t column = 1; column < 10; ++column) {
        table.set_align(column, Align::kRight);
      }
      for (const SubscriberLatencyView& s : subscribers) {
        const bool any = s.count > 0;
        table.add_row({s.node, std::to_string(s.pid), std::to_string(s.taken), std::to_string(s.count),
                       any ? us_text(s.p50_ns) : "-", any ? us_text(s.p90_ns) : "-", any ? us_text(s.p99_ns) : "-",
                       any ? us_text(s.p999_ns) : "-", any ? us_text(s.max_ns) : "-", any ? us_text(s.mean_ns) : "-"});
      }
      text += table.render();
    }
    for (const std::string& problem : problems) {
      text += "note: not read: " + problem + "\n";
    }
    return text + "\n";
  }

  static void add_json(JsonWriter& json, double at_s, const std::vector<SubscriberLatencyView>& subscribers,
                       const std::vector<std::string>& problems) {
    json.begin_object().member("t_s", at_s).key("subscribers").begin_array();
    for (const SubscriberLatencyView& s : subscribers) {
      json.begin_object()
          .member("subscriber_id", fmt::format("{:x}", s.subscriber_id))
          .member("node", s.node)
          .member("pid", s.pid)
          .member("taken", s.taken)
          .member("count", s.count)
          .member("p50_ns", s.p50_ns)
          .member("p90_ns", s.p90_ns)
          .member("p99_ns", s.p99_ns)
          .member("p999_ns", s.p999_ns)
          .member("max_ns", s.max_ns)
          .member("mean_ns", s.mean_ns)
          .member("seconds", s.seconds)
          .end_object();
    }
    json.end_array().key("problems").begin_array();
    for (const std::string& problem : problems) {
      json.value(problem);
    }
    json.end_array().end_object();
  }

  std::string topic_;
  RoundOptions rounds_;
};

}  // namespace

std::unique_ptr<Command> make_topic_delay_command() { return std::make_unique<TopicDelayCommand>(); }

}  // namespace axon::tools
