// `axon record`: records topics into MCAP files, zero copy from shared memory; `axon record --recover FILE`
// gives a file cut short (a killed recorder, a full disk) its summary again (docs/tools.md, "axon record").
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/json_writer.hpp"
#include "src/tools/axon/record/progress_line.hpp"
#include "src/tools/axon/record/recorder.hpp"
#include "src/tools/axon/text_table.hpp"
#include "src/tools/axon/topic/watch.hpp"
#include "src/tools/mcap/recover.hpp"

namespace axon::tools {
namespace {

/// "drive.mcap" -> "drive.recovered.mcap": where --recover writes when --output is not given.
std::string recovered_name(const std::string& path) {
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash + 2)) {
    return path + ".recovered";
  }
  return path.substr(0, dot) + ".recovered" + path.substr(dot);
}

std::string mb_text(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", static_cast<double>(bytes) / 1e6);
  return text;
}

class RecordCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("record", "Record topics into an MCAP file (zero copy), or --recover a cut one");
    sub->add_option("topics", patterns_, "Topics to record: names or globs ('camera/*')");
    sub->add_option("--regex", regexes_, "Record the topics whose whole name matches this regular expression")
        ->type_name("RE");
    sub->add_flag("--all", all_, "Record every topic");
    sub->add_option("-o,--output", output_,
                    "The MCAP file to write (split recordings: PATH with _0, _1 ... before its extension)");
    sub->add_option("--duration", options_.duration_s, "Stop after this many seconds")->check(CLI::PositiveNumber);
    sub->add_option("--max-bytes", options_.max_bytes, "Stop once the files hold this many bytes")
        ->check(CLI::PositiveNumber);
    sub->add_option("--split-size", split_mib_, "Start a new file every this many MiB")->check(CLI::PositiveNumber);
    sub->add_option("--split-duration", options_.split_duration_s, "Start a new file every this many seconds")
        ->check(CLI::PositiveNumber);
    sub->add_option("--compression", compression_, "Chunk compression: none (default, zero copy), lz4 or zstd")
        ->check(CLI::IsMember({"none", "lz4", "zstd"}));
    sub->add_flag("--reliable", options_.reliable,
                  "Reliable subscriptions: publishers wait (up to their block timeout) when the recorder falls "
                  "behind, instead of the recorder dropping the oldest messages");
    sub->add_option("--block-timeout", options_.block_timeout_s,
                    "With --reliable: seconds a publisher waits for room before it drops (counted as lost; "
                    "default 0.1)")
        ->check(CLI::Range(0.0, 3600.0));
    sub->add_option("--depth", options_.depth, "Each subscription's queue, in messages (1..256, default 256)")
        ->check(CLI::Range(1, 256));
    sub->add_option("--recover", recover_, "Rebuild the summary of FILE, cut short, into --output")->type_name("FILE");
    sub->footer(
        "Topics that appear after the start are recorded from when they appear (the domain is looked at every "
        "150 ms). Stops on Ctrl-C (SIGINT) or SIGTERM, --duration or --max-bytes, and closes the file with its "
        "summary. Messages the recorder could not keep up with are dropped oldest first (the publishers never "
        "wait, unless --reliable) and reported per topic as 'lost'. A progress line is shown on a terminal. "
        "--recover writes FILE's complete chunks with a new summary to --output (default: FILE.recovered.mcap).\n\n"
        "Exit status: 0 when the recording ended as asked, 1 on a failure (the disk full, the domain not "
        "joined, a file that does not recover), 2 on a usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    if (!recover_.empty()) {
      return run_recover(globals, out);
    }
    if (output_.empty()) {
      std::fprintf(stderr, "axon record: name the file to write with --output PATH\n");
      return kExitUsage;
    }
    auto selection = TopicSelection::create(patterns_, regexes_, all_);
    if (!selection) {
      std::fprintf(stderr, "axon record: %s\n", std::string(selection.error().message()).c_str());
      return kExitUsage;
    }
    options_.output = output_;
    options_.compression = compression_ == "lz4"    ? mcap::Compression::kLz4
                           : compression_ == "zstd" ? mcap::Compression::kZstd
                                                    : mcap::Compression::kNone;
    options_.split_bytes = static_cast<std::uint64_t>(split_mib_ * 1024.0 * 1024.0);
    StopOnSignals signals;
    ProgressLine line(stderr);
    std::function<void(const RecordStats&)> progress;
    if (line.enabled()) {
      progress = [&line](const RecordStats& stats) { line.show(stats); };
    }
    auto stats = record(globals, *selection, options_, progress);
    line.finish();
    if (!stats) {
      return report_failure(stats.error());
    }
    if (globals.json) {
      std::fprintf(out, "%s\n", json_of(*stats).c_str());
    } else {
      print_text(out, *stats);
    }
    return kExitOk;
  }

 private:
  [[nodiscard]] std::string json_of(const RecordStats& stats) const {
    JsonWriter doc;
    doc.begin_object().key("files").begin_array();
    for (const std::string& file : stats.files) {
      doc.value(file);
    }
    doc.end_array()
        .member("compression", compression_)
        .member("qos", stats.qos)
        .member("seconds", stats.seconds)
        .member("stopped_by", stats.stopped_by)
        .member("messages", stats.messages)
        .member("payload_bytes", stats.payload_bytes)
        .member("file_bytes", stats.file_bytes)
        .member("lost", stats.lost)
        .key("topics")
        .begin_array();
    for (const TopicRecordStats& topic : stats.topics) {
      doc.begin_object()
          .member("topic", topic.topic)
          .member("type", topic.type_name)
          .member("serializer", topic.serializer)
          .member("messages", topic.messages)
          .member("payload_bytes", topic.payload_bytes)
          .member("lost", topic.lost)
          .member("rejected", topic.rejected)
          .end_object();
    }
    doc.end_array().end_object();
    return doc.text();
  }

  void print_text(std::FILE* out, const RecordStats& stats) const {
    std::string files;
    for (const std::string& file : stats.files) {
      files += (files.empty() ? "" : ", ") + file;
    }
    std::fprintf(out, "recorded %zu topic%s for %.1f s into %s (%s MB, compression %s; stopped by %s)\n",
                 stats.topics.size(), stats.topics.size() == 1 ? "" : "s", stats.seconds, files.c_str(),
                 mb_text(stats.file_bytes).c_str(), compression_.c_str(), stats.stopped_by.c_str());
    TextTable table({"TOPIC", "TYPE", "MESSAGES", "MB", "LOST"});
    for (std::size_t column = 2; column < 5; ++column) {
      table.set_align(column, Align::kRight);
    }
    for (const TopicRecordStats& topic : stats.topics) {
      table.add_row({topic.topic, topic.type_name, std::to_string(topic.messages), mb_text(topic.payload_bytes),
                     std::to_string(topic.lost)});
    }
    if (table.rows() > 0) {
      std::fprintf(out, "%s", table.render().c_str());
    }
    if (stats.lost > 0) {
      std::fprintf(out,
                   "%llu message%s lost: the recorder fell behind (a faster disk, --compression none, a deeper "
                   "--depth, or --reliable to make publishers wait)\n",
                   static_cast<unsigned long long>(stats.lost), stats.lost == 1 ? " was" : "s were");
    }
  }

  int run_recover(const GlobalOptions& globals, std::FILE* out) const {
    const std::string target = output_.empty() ? recovered_name(recover_) : output_;
    if (target == recover_) {
      std::fprintf(stderr, "axon record: --recover writes a new file: give an --output other than %s\n",
                   recover_.c_str());
      return kExitUsage;
    }
    auto report = mcap::recover(recover_, target);
    if (!report) {
      return report_failure(report.error());
    }
    if (globals.json) {
      JsonWriter doc;
      doc.begin_object()
          .member("input", recover_)
          .member("output", target)
          .member("chunks", report->chunks)
          .member("messages", report->messages)
          .member("bytes_kept", report->bytes_kept)
          .member("bytes_dropped", report->bytes_dropped)
          .member("note", report->note)
          .end_object();
      std::fprintf(out, "%s\n", doc.text().c_str());
      return kExitOk;
    }
    std::fprintf(out, "recovered %llu message%s in %llu chunk%s of %s into %s (%llu bytes kept, %llu dropped)\n",
                 static_cast<unsigned long long>(report->messages), report->messages == 1 ? "" : "s",
                 static_cast<unsigned long long>(report->chunks), report->chunks == 1 ? "" : "s", recover_.c_str(),
                 target.c_str(), static_cast<unsigned long long>(report->bytes_kept),
                 static_cast<unsigned long long>(report->bytes_dropped));
    if (!report->note.empty()) {
      std::fprintf(out, "%s\n", report->note.c_str());
    }
    return kExitOk;
  }

  std::vector<std::string> patterns_;
  std::vector<std::string> regexes_;
  bool all_ = false;
  std::string output_;
  std::string compression_ = "none";
  double split_mib_ = 0;
  std::string recover_;
  RecordOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_record_command() { return std::make_unique<RecordCommand>(); }

}  // namespace axon::tools
