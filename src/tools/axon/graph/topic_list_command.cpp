// `axon topic list`: the domain's topics on this host, with their type, how many publish and subscribe, and the
// rate their publishers send at, measured over a short window from their own counts (publish_rates.hpp), as
// `axon monitor` measures it.
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "src/base/clock.hpp"
#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/graph/domain_text.hpp"
#include "src/tools/axon/graph/publish_rates.hpp"
#include "src/tools/axon/text_table.hpp"

namespace axon::tools {
namespace {

/// "shm,udp".
std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) {
    out += (out.empty() ? "" : ",") + word;
  }
  return out;
}

/// The publishers' counts at one moment, and the statistics that could not be read.
struct PublishedRead {
  std::vector<PublisherTrafficView> publishers;
  std::vector<std::string> problems;
  std::int64_t at_ns = 0;  ///< Halfway through the read: the counters were read somewhere in it.
};

class TopicListCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("list", "The domain's topics on this host: type, serializer, endpoints, rate");
    sub->add_option("--window", window_s_,
                    "Seconds over which to measure each topic's rate (default 0.5; 0: do not measure, print '-')")
        ->check(CLI::Range(0.0, 60.0));
    sub->footer(
        "Read from the domain's registry without joining the domain. RATE_HZ is what the topic's publishers on "
        "this host published per second over the window, from their own counts in their nodes' live statistics "
        "(as `axon monitor` shows it), whether or not a subscriber queued the messages; use `axon topic hz` for "
        "the period's spread. A topic without a publisher on this host, or every topic with --window 0, shows "
        "'-'. Exit status: 0 (also when no node runs), 1 when the registry cannot be read, 2 on a usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    auto view = read_view(globals);
    if (!view) {
      return report_error(view.error());
    }
    // The rates: the publishers' counts read twice, `window` apart; the table shows the topics of a view read
    // after the second.
    std::vector<PublishRates> rates;
    std::vector<std::string> notes;
    if (window_s_ > 0 && view->exists && !view->topics.empty()) {
      auto first = read_published(globals);
      if (!first) {
        return report_error(first.error());
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(window_s_));
      auto second = read_published(globals);
      if (!second) {
        return report_error(second.error());
      }
      auto now = read_view(globals);
      if (!now) {
        return report_error(now.error());
      }
      *view = std::move(*now);
      const PublishSample before = sample_published(first->publishers, first->at_ns);
      for (const TopicView& t : view->topics) {
        rates.push_back(publish_rates(t.name, before, second->publishers, second->at_ns));
      }
      for (const std::string& problem : second->problems) {
        notes.push_back("statistics not read: " + problem);
      }
    }
    rates.resize(view->topics.size());  // not measured: -1
    if (globals.json) {
      print(out, json_of(*view, rates, notes) + "\n");
      return kExitOk;
    }
    TextTable table({"TOPIC", "TYPE", "SERIALIZER", "PUBLISHERS", "SUBSCRIBERS", "RATE_HZ", "TRANSPORT"});
    for (std::size_t column = 3; column < 6; ++column) {
      table.set_align(column, Align::kRight);
    }
    for (std::size_t i = 0; i < view->topics.size(); ++i) {
      const TopicView& t = view->topics[i];
      table.add_row({t.name, t.type_name, t.serializer,
                     std::to_string(endpoints_of_topic(*view, GraphEndpointKind::kPublisher, t.slot)),
                     std::to_string(endpoints_of_topic(*view, GraphEndpointKind::kSubscriber, t.slot)),
                     rates[i].rate_hz < 0 ? "-" : fmt::format("{:.1f}", rates[i].rate_hz),
                     joined(topic_transports(*view, t.slot))});
    }
    if (view->exists) {
      print(out, table.rows() == 0 ? fmt::format("no topics in domain {}\n", globals.domain_id) : table.render());
    }
    for (const std::string& note : notes) {
      print(out, "note: " + note + "\n");
    }
    print(out, view_notes(*view));
    return kExitOk;
  }

 private:
  /// Every publisher's counts on this host, from the nodes' live statistics.
  static Result<PublishedRead> read_published(const GlobalOptions& globals) {
    const std::int64_t start_ns = monotonic_now_ns();
    auto stats = read_live_stats(DomainAddress{.domain_id = globals.domain_id, .shm_dir = {}});
    if (!stats) {
      return stats.error();
    }
    const std::int64_t end_ns = monotonic_now_ns();
    return PublishedRead{.publishers = std::move(stats->publishers),
                         .problems = std::move(stats->problems),
                         .at_ns = start_ns + (end_ns - start_ns) / 2};
  }

  [[nodiscard]] std::string json_of(const DomainView& view, const std::vector<PublishRates>& rates,
                                    const std::vector<std::string>& notes) const {
    JsonWriter json;
    json.begin_object();
    write_view_members(json, view);
    json.member("rate_window_s", window_s_).key("topics").begin_array();
    for (std::size_t i = 0; i < view.topics.size(); ++i) {
      const TopicView& t = view.topics[i];
      json.begin_object()
          .member("name", t.name)
          .member("type", t.type_name)
          .member("serializer", t.serializer)
          .member("type_hash", fmt::format("{:016x}", t.type_hash))
          .member("publishers", endpoints_of_topic(view, GraphEndpointKind::kPublisher, t.slot))
          .member("subscribers", endpoints_of_topic(view, GraphEndpointKind::kSubscriber, t.slot))
          .key("rate_hz");
      if (rates[i].rate_hz < 0) {
        json.null_value();  // not measured: null, not a made-up zero
      } else {
        json.value(rates[i].rate_hz);
      }
      json.key("transports").begin_array();
      for (const std::string& transport : topic_transports(view, t.slot)) {
        json.value(transport);
      }
      json.end_array().end_object();
    }
    json.end_array().key("notes").begin_array();
    for (const std::string& note : notes) {
      json.value(note);
    }
    json.end_array().end_object();
    return json.text();
  }

  double window_s_ = 0.5;
};

}  // namespace

std::unique_ptr<Command> make_topic_list_command() { return std::make_unique<TopicListCommand>(); }

}  // namespace axon::tools
