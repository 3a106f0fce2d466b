// `axon monitor`: the domain's topics on this host, looked at every interval: each topic's rate and bandwidth,
// its subscribers' latency, what reached them and what was dropped since the last look, and what waits in their
// queues. On a terminal one screen redrawn in place (like top), over a pipe a table per look.
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/base/clock.hpp"
#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/graph/domain_text.hpp"
#include "src/tools/axon/graph/monitor_round.hpp"
#include "src/tools/axon/graph/monitor_screen.hpp"
#include "src/tools/axon/graph/rounds.hpp"
#include "src/tools/axon/topic/watch.hpp"

namespace axon::tools {
namespace {

class MonitorCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "monitor", "The domain's topics with their rate, bandwidth, latency and queues, redrawn like top until Ctrl-C");
    rounds_.add_to(*sub);
    sub->add_option("--sort", sort_,
                    "Order of the topics: name (A..Z), or largest first: rate, bandwidth, p99, "
                    "drops, queued")
        ->check(CLI::IsMember(sort_words()))
        ->capture_default_str();
    sub->footer(
        "Columns (per topic, for its endpoints on this host):\n"
        "  PUB, SUB      publishers and subscribers.\n"
        "  RATE_HZ       messages its publishers published per second (whether a subscriber queued them or not).\n"
        "  BANDWIDTH     their payload bytes per second, as published: a serialized message's encoded size, a raw\n"
        "                struct's sizeof; chunk headers and unused chunk space are not counted.\n"
        "  P50_US/P99_US latency from publish to take() in microseconds over the last 10 s or so, the largest over\n"
        "                the topic's subscribers (upper edges of log buckets, as `axon topic delay` prints them).\n"
        "  DELIVERED/S   messages queued for its subscribers per second, summed over them.\n"
        "  DROPPED/S     messages not queued for them per second (queue full, oldest evicted, blocking publish timed\n"
        "                out), summed over them.\n"
        "  QUEUED        messages waiting in their queues now; FULLEST the fullest queue as queued/depth.\n"
        "Rates need two looks: '-' (null with --json) until then, and for a topic without a publisher (or, for\n"
        "DELIVERED/S and DROPPED/S, without a subscriber) on this host. Rate and bandwidth come from the publishing\n"
        "threads' counters and latency from the takes, in each node's statistics segment (docs/design/live-stats.md);\n"
        "the queue figures from the publishing nodes' pools, as in `axon topic info`.\n\n"
        "On a terminal the screen is redrawn in place every interval and keys change the order (n r b p d u: name,\n"
        "rate, bandwidth, p99, drops, queued; q quits); over a pipe, a table per look; with --json, one document\n"
        "when it stops. Exit status: 0, 1 when the registry cannot be read, 2 on a usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    const StopOnSignals stop;  // Ctrl-C ends the monitor after its current look (and puts the terminal back)
    sort_key_ = *parse_sort(sort_);
    if (!globals.json && ::isatty(::fileno(out)) == 1) {
      Result<void> ran;
      {
        TerminalScreen screen(out);
        ran = run_on_screen(globals, screen);
      }  // the terminal as it was before the error is printed
      return ran ? kExitOk : report_error(ran.error());
    }
    std::vector<Round> rounds;
    auto ran = rounds_.run([&](std::int64_t start_ns) -> Result<void> {
      auto round = look(globals, start_ns);
      if (!round) {
        return round.error();
      }
      if (!globals.json) {
        print(out, monitor_pipe_text(*round));
        std::fflush(out);
      }
      rounds.push_back(std::move(*round));
      return {};
    });
    if (!ran) {
      return report_error(ran.error());
    }
    if (globals.json) {
      print(out, monitor_json(globals.domain_id, sort_key_, rounds) + "\n");
    }
    return kExitOk;
  }

 private:
  Result<void> run_on_screen(const GlobalOptions& globals, TerminalScreen& screen) {
    Round last;
    auto draw = [&] {
      const ScreenHeader header{.domain_id = globals.domain_id,
                                .interval_s = rounds_.interval_s,
                                .sort = sort_key_,
                                .keys = screen.reads_keys()};
      screen.draw(monitor_screen_text(last, header, screen.rows()));
    };
    return rounds_.run(
        [&](std::int64_t start_ns) -> Result<void> {
          auto round = look(globals, start_ns);
          if (!round) {
            return round.error();
          }
          last = std::move(*round);
          draw();
          return {};
        },
        [&] {
          while (const auto key = screen.key()) {
            if (*key == 'q') {
              return false;
            }
            if (const auto sort = sort_for_key(*key)) {
              sort_key_ = *sort;
              sort_topics(last.topics, sort_key_);
              draw();  // at once, with the figures of the last look
            }
          }
          return true;
        });
  }

  static std::optional<MonitorSort> sort_for_key(char key) noexcept {
    switch (key) {
      case 'n': return MonitorSort::kName;
      case 'r': return MonitorSort::kRate;
      case 'b': return MonitorSort::kBandwidth;
      case 'p': return MonitorSort::kP99;
      case 'd': return MonitorSort::kDrops;
      case 'u': return MonitorSort::kQueued;
      default: return std::nullopt;
    }
  }

  /// Reads the registry, the publishers' queues and the live statistics once.
  Result<Round> look(const GlobalOptions& globals, std::int64_t start_ns) {
    const DomainAddress address{.domain_id = globals.domain_id, .shm_dir = {}};
    auto view = read_view(globals);
    if (!view) {
      return view.error();
    }
    auto queues = read_topic_connections(address, *view, "", kPatienceNs);
    if (!queues) {
      return queues.error();
    }
    auto stats = read_live_stats(address);
    if (!stats) {
      return stats.error();
    }
    Round round = counters_.look(*view, *queues, *stats, monotonic_now_ns(), start_ns);
    sort_topics(round.topics, sort_key_);
    round.notes = queues->unreadable;
    for (const std::string& problem : stats->problems) {
      round.notes.push_back("statistics not read: " + problem);
    }
    if (std::string notes = view_notes(*view); !notes.empty()) {
      notes.pop_back();                               // its newline: the notes are printed one per line
      constexpr std::string_view kPrefix = "note: ";  // the lock note has it already; printed with it below
      round.notes.push_back(notes.starts_with(kPrefix) ? notes.substr(kPrefix.size()) : notes);
    }
    return round;
  }

  static constexpr std::int64_t kPatienceNs = 200'000'000;  ///< Per publishing node, per look.

  RoundOptions rounds_;
  std::string sort_ = "name";
  MonitorSort sort_key_ = MonitorSort::kName;
  MonitorCounters counters_;
};

}  // namespace

std::unique_ptr<Command> make_monitor_command() { return std::make_unique<MonitorCommand>(); }

}  // namespace axon::tools
