// `axon topic hz TOPIC`: the rate of a topic's messages and the spread of their period, like `ros2 topic hz`
// (docs/tools.md, "axon topic hz").
#include <cstdio>
#include <memory>
#include <string>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/json_writer.hpp"
#include "src/tools/axon/topic/watch.hpp"
#include "src/tools/axon/topic/window_stats.hpp"

namespace axon::tools {
namespace {

class HzCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("hz", "Print a topic's message rate and the min/max/std of its period");
    add_watch_options(*sub, options_);
    sub->add_option("--window", window_, "Compute over the last N messages (default 10000)")
        ->check(CLI::Range(std::size_t{2}, std::size_t{100'000'000}));
    sub->footer(
        "Times are the messages' publish times (same host, CLOCK_MONOTONIC): the figures are the publisher's. "
        "Runs until Ctrl-C, --duration or --count; text: the figures once a second and when it stops; --json: "
        "one document when it stops.\n\n"
        "Exit status: 0 when it stopped as asked, 1 when the topic had no publisher within --wait or the domain "
        "could not be joined, 2 on a usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    StopOnSignals signals;
    auto watch = open_watch(globals, options_);
    if (!watch) {
      return report_failure(watch.error());
    }
    WindowStats stats(window_);
    auto print_text = [&] {
      const WindowFigures f = stats.figures();
      if (f.messages < 2) {
        std::fprintf(out, "no rate yet (%llu message%s)\n", static_cast<unsigned long long>(f.messages),
                     f.messages == 1 ? "" : "s");
      } else {
        std::fprintf(out, "average rate: %.3f\n\tmin: %.6fs max: %.6fs std dev: %.6fs window: %llu\n", f.rate_hz,
                     f.period_min_s, f.period_max_s, f.period_std_s, static_cast<unsigned long long>(f.messages));
      }
      std::fflush(out);
    };
    std::function<void()> each_second;
    if (!globals.json) {
      each_second = print_text;
    }
    run_watch(
        *watch, options_,
        [&](const Sample<Bytes>& sample) { stats.add(sample.info().publish_time_ns, sample.info().payload_bytes); },
        each_second);
    if (!globals.json) {
      print_text();
      return kExitOk;
    }
    const WindowFigures f = stats.figures();
    JsonWriter doc;
    doc.begin_object()
        .member("topic", options_.topic)
        .member("messages", stats.total_messages())
        .member("window", f.messages)
        .member("rate_hz", f.rate_hz)
        .key("period_s")
        .begin_object()
        .member("mean", f.period_mean_s)
        .member("min", f.period_min_s)
        .member("max", f.period_max_s)
        .member("std", f.period_std_s)
        .end_object()
        .end_object();
    std::fprintf(out, "%s\n", doc.text().c_str());
    return kExitOk;
  }

 private:
  WatchOptions options_;
  std::size_t window_ = 10'000;
};

}  // namespace

std::unique_ptr<Command> make_topic_hz_command() { return std::make_unique<HzCommand>(); }

}  // namespace axon::tools
