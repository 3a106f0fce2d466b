// `axon topic bw TOPIC`: the bytes per second of a topic and the sizes of its messages, like
// `ros2 topic bw` (docs/tools.md, "axon topic bw").
#include <cstdio>
#include <memory>
#include <string>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/json_writer.hpp"
#include "src/tools/axon/topic/watch.hpp"
#include "src/tools/axon/topic/window_stats.hpp"

namespace axon::tools {
namespace {

/// "2.05 KiB", "13 B": for the text output only (--json gives bytes).
std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 3) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.2f %s", bytes, units[unit]);
  return text;
}

class BwCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("bw", "Print a topic's bytes per second and the mean/min/max message size");
    add_watch_options(*sub, options_);
    sub->add_option("--window", window_, "Compute over the last N messages (default 10000)")
        ->check(CLI::Range(std::size_t{2}, std::size_t{100'000'000}));
    sub->footer(
        "Sizes are the payloads as published (the bytes a subscriber reads); times are their publish times. Runs "
        "until Ctrl-C, --duration or --count; text: the figures once a second and when it stops; --json: one "
        "document when it stops.\n\n"
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
      if (f.messages == 0) {
        std::fprintf(out, "no messages yet\n");
      } else {
        std::fprintf(out, "%s/s from %llu messages\n\tmessage size mean: %s min: %s max: %s\n",
                     human_bytes(f.bytes_per_s).c_str(), static_cast<unsigned long long>(f.messages),
                     human_bytes(f.size_mean_bytes).c_str(), human_bytes(static_cast<double>(f.size_min_bytes)).c_str(),
                     human_bytes(static_cast<double>(f.size_max_bytes)).c_str());
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
        .member("bytes", stats.total_bytes())
        .member("window", f.messages)
        .member("bytes_per_s", f.bytes_per_s)
        .key("size_bytes")
        .begin_object()
        .member("mean", f.size_mean_bytes)
        .member("min", f.size_min_bytes)
        .member("max", f.size_max_bytes)
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

std::unique_ptr<Command> make_topic_bw_command() { return std::make_unique<BwCommand>(); }

}  // namespace axon::tools
