// `axon play FILE...`: replays MCAP recordings into the domain with their recorded types and timing
// (docs/tools.md, "axon play"; docs/design/replay.md).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "axon/node.hpp"
#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/play/key_input.hpp"
#include "src/tools/axon/play/play_options.hpp"
#include "src/tools/axon/play/play_report.hpp"
#include "src/tools/axon/play/player.hpp"
#include "src/tools/axon/topic/watch.hpp"

namespace axon::tools {
namespace {

/// The most publishers a node may have (NodeOptions::pool_publishers).
constexpr std::size_t kMaxPublishers = 4096;

class PlayCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("play",
                                       "Replay MCAP recordings: each message on its topic, as its recorded "
                                       "type, with the recorded timing");
    sub->add_option("files", options_.files, "MCAP files (several: merged in log-time order)")
        ->required()
        ->check(CLI::ExistingFile);
    sub->add_option("--rate", rate_text_,
                    "Speed: 1 the recorded timing (default), 0.5 half, 2 twice as fast; max: as fast as publishing "
                    "allows")
        ->check([](const std::string& text) -> std::string {
          if (text == "max") {
            return {};
          }
          try {
            std::size_t used = 0;
            const double rate = std::stod(text, &used);
            return used == text.size() && rate > 0 ? std::string{} : "a rate is a number above 0, or max";
          } catch (const std::exception&) {
            return "a rate is a number above 0, or max";
          }
        });
    sub->add_option("--start", options_.start_offset_s, "Start this many seconds into the recording")
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--duration", options_.duration_s, "Replay only this many seconds of the recording (from --start)")
        ->check(CLI::PositiveNumber);
    sub->add_option("--delay", options_.delay_s,
                    "Wait this many seconds after advertising every topic before the first message (so that "
                    "subscribers that join a topic when it appears, such as axon record, miss nothing)")
        ->check(CLI::NonNegativeNumber);
    sub->add_flag("--loop", options_.loop, "Replay again from the start until Ctrl-C");
    sub->add_option("--topics", options_.topics, "Only these recorded topics (comma-separated, or repeated)")
        ->delimiter(',');
    sub->add_option("--remap", remaps_, "Publish recorded topic FROM as TO (FROM:=TO; repeated for several)")
        ->check([](const std::string& text) -> std::string {
          const auto at = text.find(":=");
          return at == std::string::npos || at == 0 || at + 2 == text.size() ? "a remap is FROM:=TO" : "";
        });
    sub->add_flag("--spin", options_.spin,
                  "Spin on the clock between messages instead of sleeping until shortly before each: one core busy "
                  "for the whole replay, for timing within tens of microseconds where a sleeping thread's timer "
                  "wakes it late (a VM's idle vCPU)");
    sub->add_flag("--paused", options_.paused,
                  "Start paused: on a terminal, space pauses and resumes, s (or the right arrow) publishes the next "
                  "message; keys may also come through a pipe on stdin, and play resumes when stdin ends");
    sub->footer(
        "Each message is published on its topic as the type the recorder wrote in the channel's axon.* metadata "
        "(name, hash, serializer, size, schema), so typed subscribers of the same schema take it as from a typed "
        "publisher; a topic the domain does not have yet is created as that type. Channels of files from other "
        "tools are replayed when they are FlatBuffers or Protobuf with a schema. Channels that cannot be replayed "
        "are named with the reason and skipped; a message larger than this node's largest chunk class is named "
        "and skipped. Timing: each message is due at start + (log time - first log time) / rate, waited for by "
        "sleeping until shortly before and spinning (--spin: spinning throughout). Keys work while stdin is a "
        "terminal (non-canonical mode, restored on exit and on signals); Ctrl-C stops cleanly.\n\n"
        "Text: messages published per topic, the channels skipped and why, and the timing error. --json: one "
        "document with the same and the timing error's p50/p99/max (publish time - deadline, ns).\n\n"
        "Exit status: 0 when the replay ran (skipped channels or messages are reported, not failures), 1 when a "
        "file cannot be read, no channel can be replayed or the domain cannot be joined, 2 on a usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    if (rate_text_ == "max") {
      options_.rate.reset();
    } else if (!rate_text_.empty()) {
      options_.rate = std::stod(rate_text_);
    }
    for (const std::string& remap : remaps_) {
      const auto at = remap.find(":=");
      options_.remaps.emplace_back(remap.substr(0, at), remap.substr(at + 2));
    }
    StopOnSignals signals;
    PlayReport report;
    report.rate = options_.rate;
    report.spin = options_.spin;
    Player player(options_, report);
    auto ok = play(globals, player, report);
    for (const std::string& problem : report.problems) {
      std::fprintf(stderr, "axon play: %s\n", problem.c_str());
    }
    if (!ok) {
      if (!globals.json) {
        for (const SkippedChannel& skipped : report.skipped_channels) {
          std::fprintf(stderr, "axon play: skipped channel '%s' of %s: %s\n", skipped.topic.c_str(),
                       skipped.file.c_str(), skipped.reason.c_str());
        }
      }
      report.error = std::string(ok.error().message());
      std::fprintf(stderr, "axon: %s\n", report.error.c_str());
    }
    if (globals.json) {
      print_play_json(report, out);
    } else if (ok) {
      print_play_text(report, out);
    }
    return ok ? kExitOk : kExitFailed;
  }

 private:
  Result<void> play(const GlobalOptions& globals, Player& player, PlayReport& report) {
    if (auto opened = player.open_files(); !opened) {
      return opened.error();
    }
    NodeOptions node_options;
    node_options.domain_id = globals.domain_id;
    node_options.pool_publishers =
        static_cast<std::uint32_t>(std::clamp<std::size_t>(player.channel_count() + 1, 1, kMaxPublishers));
    // Every page of the pool populated up front: the first publish into a chunk would otherwise page-fault, and
    // that message would go out milliseconds late.
    node_options.prefault_memory = true;
    // One process stands for every recorded publisher: chunks per channel, not a default pool's few.
    const std::vector<ReplayDemand> demands = player.pool_demands();
    node_options.chunk_classes = replay_pool_classes(demands);
    report.pool = describe_pool(node_options.chunk_classes);
    auto node = Node::create("axon-play-" + std::to_string(::getpid()), node_options);
    if (!node) {
      return node.error();
    }
    KeyInput keys(options_.paused);
    return player.run(**node, keys);
  }

  PlayOptions options_;
  std::string rate_text_;
  std::vector<std::string> remaps_;
};

}  // namespace

std::unique_ptr<Command> make_play_command() { return std::make_unique<PlayCommand>(); }

}  // namespace axon::tools
