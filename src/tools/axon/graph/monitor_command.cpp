// `axon monitor`: the domain's topics on this host refreshed every interval, with the message rate, what reached
// the subscribers and what was dropped since the last look, and what waits in their queues.
#include <fmt/format.h>

#include <memory>
#include <utility>

#include "src/base/clock.hpp"
#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/graph/domain_text.hpp"
#include "src/tools/axon/graph/queue_rates.hpp"
#include "src/tools/axon/graph/rounds.hpp"
#include "src/tools/axon/text_table.hpp"
#include "src/tools/axon/topic/watch.hpp"

namespace axon::tools {
namespace {

/// One topic in one round.
struct TopicRound {
  std::string name;
  std::size_t publishers = 0;
  std::size_t subscribers = 0;
  double rate_hz = -1;  ///< Messages its publishers sent per second (-1: not known yet, or no queue here).
  double delivered_per_s = -1;
  double dropped_per_s = -1;
  std::uint64_t queued = 0;
};

struct Round {
  double at_s = 0;  ///< Since the monitor started.
  std::vector<TopicRound> topics;
  std::vector<std::string> notes;
};

class MonitorCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("monitor", "The domain's topics with their rates, refreshed until Ctrl-C");
    rounds_.add_to(*sub);
    sub->footer(
        "RATE is what the topic's publishers on this host sent per second (each publisher's busiest queue: "
        "delivered plus dropped), DELIVERED/s and DROPPED/s are summed over the subscribers on this host, QUEUED "
        "is what waits in their queues now. A topic without a subscriber on this host shows no rate (its "
        "messages leave the host or go nowhere). Counters come from the publishing nodes' pools, as in "
        "`axon topic info`. With --json, one document when it stops. Exit status: 0, 1 when the registry cannot "
        "be read, 2 on a usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    const StopOnSignals stop;  // Ctrl-C ends the monitor after its current look
    std::vector<Round> rounds;
    auto ran = rounds_.run([&](std::int64_t start_ns) -> Result<void> {
      auto round = look(globals, monotonic_now_ns(), start_ns);
      if (!round) {
        return round.error();
      }
      if (!globals.json) {
        print(out, text_of(*round));
        std::fflush(out);
      }
      rounds.push_back(std::move(*round));
      return {};
    });
    if (!ran) {
      return report_error(ran.error());
    }
    if (globals.json) {
      print(out, json_of(globals, rounds) + "\n");
    }
    return kExitOk;
  }

 private:
  Result<Round> look(const GlobalOptions& globals, std::int64_t now_ns, std::int64_t start_ns) {
    const DomainAddress address{.domain_id = globals.domain_id, .shm_dir = {}};
    auto view = read_view(globals);
    if (!view) {
      return view.error();
    }
    auto queues = read_topic_connections(address, *view, "", kPatienceNs);
    if (!queues) {
      return queues.error();
    }
    Round round{.at_s = static_cast<double>(now_ns - start_ns) / 1e9, .topics = {}, .notes = queues->unreadable};
    if (const std::string notes = view_notes(*view); !notes.empty()) {
      round.notes.push_back(notes.substr(0, notes.size() - 1));
    }
    for (const TopicView& t : view->topics) {
      TopicRound r{.name = t.name,
                   .publishers = endpoints_of_topic(*view, GraphEndpointKind::kPublisher, t.slot),
                   .subscribers = endpoints_of_topic(*view, GraphEndpointKind::kSubscriber, t.slot)};
      for (const ConnectionView& c : queues->connections) {
        r.queued += c.topic_slot == t.slot ? c.queued : 0;
      }
      const TopicRates rates = topic_rates(t.slot, seen_, queues->connections, now_ns);
      r.rate_hz = rates.rate_hz;
      r.delivered_per_s = rates.delivered_per_s;
      r.dropped_per_s = rates.dropped_per_s;
      round.topics.push_back(std::move(r));
    }
    seen_ = sample_queues(queues->connections, now_ns);
    return round;
  }

  static std::string rate_text(double value) { return value < 0 ? "-" : fmt::format("{:.1f}", value); }

  static std::string text_of(const Round& round) {
    TextTable table({"TOPIC", "PUBLISHERS", "SUBSCRIBERS", "RATE_HZ", "DELIVERED/S", "DROPPED/S", "QUEUED"});
    for (std::size_t column = 1; column < 7; ++column) {
      table.set_align(column, Align::kRight);
    }
    for (const TopicRound& t : round.topics) {
      table.add_row({t.name, std::to_string(t.publishers), std::to_string(t.subscribers), rate_text(t.rate_hz),
                     rate_text(t.delivered_per_s), rate_text(t.dropped_per_s), std::to_string(t.queued)});
    }
    std::string text = fmt::format("t={:.1f}s\n{}", round.at_s, table.rows() == 0 ? "no topics\n" : table.render());
    for (const std::string& note : round.notes) {
      text += "note: " + note + "\n";
    }
    return text + "\n";
  }

  static std::string json_of(const GlobalOptions& globals, const std::vector<Round>& rounds) {
    JsonWriter json;
    json.begin_object().member("domain", globals.domain_id).key("rounds").begin_array();
    for (const Round& round : rounds) {
      json.begin_object().member("t_s", round.at_s).key("topics").begin_array();
      for (const TopicRound& t : round.topics) {
        json.begin_object()
            .member("name", t.name)
            .member("publishers", t.publishers)
            .member("subscribers", t.subscribers);
        // Not measured yet: null, not a made-up zero.
        for (const auto& [name, value] :
             {std::pair{"rate_hz", t.rate_hz}, std::pair{"delivered_per_s", t.delivered_per_s},
              std::pair{"dropped_per_s", t.dropped_per_s}}) {
          json.key(name);
          if (value < 0) {
            json.null_value();
          } else {
            json.value(value);
          }
        }
        json.member("queued", t.queued).end_object();
      }
      json.end_array().key("notes").begin_array();
      for (const std::string& note : round.notes) {
        json.value(note);
      }
      json.end_array().end_object();
    }
    json.end_array().end_object();
    return json.text();
  }

  static constexpr std::int64_t kPatienceNs = 200'000'000;  ///< Per publishing node, per look.

  RoundOptions rounds_;
  QueueSample seen_;  ///< The queues at the last look.
};

}  // namespace

std::unique_ptr<Command> make_monitor_command() { return std::make_unique<MonitorCommand>(); }

}  // namespace axon::tools
