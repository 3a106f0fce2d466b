#include "src/tools/axon/play/play_report.hpp"

#include <cinttypes>

#include "src/tools/axon/json_writer.hpp"

namespace axon::tools {
namespace {

unsigned long long ull(std::uint64_t n) { return static_cast<unsigned long long>(n); }
double us(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }
/// How play waited for deadlines, as --json and the text name it.
const char* wait_name(const PlayReport& report) { return report.spin ? "spin" : "sleep-then-spin"; }

}  // namespace

void print_play_text(const PlayReport& report, std::FILE* out) {
  std::uint64_t published = 0;
  for (const TopicReplay& topic : report.topics) {
    published += topic.published;
  }
  std::fprintf(out, "replayed %llu message%s from %zu file%s in %.2f s", ull(published), published == 1 ? "" : "s",
               report.files.size(), report.files.size() == 1 ? "" : "s", report.wall_s);
  if (report.rate) {
    std::fprintf(out, " at rate %g", *report.rate);
  } else {
    std::fprintf(out, " at rate max");
  }
  if (report.loops > 1) {
    std::fprintf(out, ", %llu passes", ull(report.loops));
  }
  std::fprintf(out, "%s\n", report.interrupted ? " (stopped by a signal)" : "");
  if (!report.pool.empty()) {
    std::fprintf(out, "  pool: %s\n", report.pool.c_str());
  }
  for (const TopicReplay& topic : report.topics) {
    std::fprintf(out, "  %-32s %-36s %8llu published", topic.topic.c_str(), topic.type.c_str(), ull(topic.published));
    if (topic.skipped_too_large + topic.skipped_no_chunk != 0) {
      std::fprintf(out, ", %llu skipped", ull(topic.skipped_too_large + topic.skipped_no_chunk));
    }
    if (topic.topic != topic.recorded_topic) {
      std::fprintf(out, " (recorded as %s)", topic.recorded_topic.c_str());
    }
    std::fprintf(out, "\n");
  }
  for (const SkippedChannel& skipped : report.skipped_channels) {
    std::fprintf(out, "skipped channel '%s' of %s: %s\n", skipped.topic.c_str(), skipped.file.c_str(),
                 skipped.reason.c_str());
  }
  if (report.rate && report.timing.samples != 0) {
    std::fprintf(out,
                 "timing error (publish - deadline): p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us over %zu "
                 "messages (%" PRIu64 " copied ahead; %s)\n",
                 us(report.timing.p50_ns), us(report.timing.p99_ns), us(report.timing.p999_ns),
                 us(report.timing.max_ns), report.timing.samples, report.prepared_ahead, wait_name(report));
  }
}

void print_play_json(const PlayReport& report, std::FILE* out) {
  JsonWriter doc;
  doc.begin_object().key("files").begin_array();
  for (const std::string& file : report.files) {
    doc.value(file);
  }
  doc.end_array();
  if (report.rate) {
    doc.member("rate", *report.rate);
  } else {
    doc.member("rate", "max");
  }
  std::uint64_t published = 0;
  std::uint64_t skipped = 0;
  doc.key("topics").begin_array();
  for (const TopicReplay& topic : report.topics) {
    published += topic.published;
    skipped += topic.skipped_too_large + topic.skipped_no_chunk;
    doc.begin_object()
        .member("topic", topic.topic)
        .member("recorded_topic", topic.recorded_topic)
        .member("type", topic.type)
        .member("serializer", topic.serializer)
        .member("published", topic.published)
        .member("delivered", topic.delivered)
        .member("skipped_too_large", topic.skipped_too_large)
        .member("skipped_no_chunk", topic.skipped_no_chunk)
        .end_object();
  }
  doc.end_array().member("published", published).member("skipped", skipped).key("skipped_channels").begin_array();
  for (const SkippedChannel& channel : report.skipped_channels) {
    doc.begin_object()
        .member("file", channel.file)
        .member("topic", channel.topic)
        .member("reason", channel.reason)
        .end_object();
  }
  doc.end_array().key("problems").begin_array();
  for (const std::string& problem : report.problems) {
    doc.value(problem);
  }
  doc.end_array()
      .member("loops", report.loops)
      .member("interrupted", report.interrupted)
      .member("wall_s", report.wall_s)
      .member("pool", report.pool)
      .key("error");
  if (report.error.empty()) {
    doc.null_value();
  } else {
    doc.value(report.error);
  }
  doc.key("timing");
  if (report.rate && report.timing.samples != 0) {
    doc.begin_object()
        .member("samples", report.timing.samples)
        .member("p50_ns", report.timing.p50_ns)
        .member("p99_ns", report.timing.p99_ns)
        .member("p999_ns", report.timing.p999_ns)
        .member("max_ns", report.timing.max_ns)
        .member("prepared_ahead", report.prepared_ahead)
        .member("wait", wait_name(report))
        .member("start_ns", report.start_ns)
        .member("first_log_time_ns", report.first_log_time_ns)
        .end_object();
  } else {
    doc.null_value();
  }
  doc.end_object();
  std::fprintf(out, "%s\n", doc.text().c_str());
}

}  // namespace axon::tools
