// `axon topic pub TOPIC JSON`: publishes a message built from JSON with the schema the topic stores, once or at a
// rate, like `ros2 topic pub` (docs/tools.md, "axon topic pub"). For testing a subscriber without its publisher.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "axon/node.hpp"
#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/json_writer.hpp"
#include "src/tools/axon/topic/message_encoder.hpp"
#include "src/tools/axon/topic/watch.hpp"

namespace axon::tools {
namespace {

using Clock = std::chrono::steady_clock;

/// How long one sleep between two messages lasts at most: how soon Ctrl-C is noticed.
constexpr auto kSleepSlice = std::chrono::milliseconds(100);

/// What a run did, for the summary and the --json document.
struct PubReport {
  TopicRecord topic;
  std::size_t message_bytes = 0;
  std::uint64_t published = 0;
  std::uint64_t delivered = 0;  ///< Deliveries to subscribers, summed over the messages.
  std::uint64_t skipped = 0;    ///< Not sent: no free chunk (back-pressure).
  std::vector<std::string> refusals;
};

class PubCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "pub", "Publish a message given as JSON on a FlatBuffers or Protobuf topic, built from its stored schema");
    sub->add_option("topic", topic_, "The topic (it must exist: a publisher or typed subscriber has it)")->required();
    sub->add_option("json", json_,
                    "The message as JSON: FlatBuffers' JSON of the table, or Protobuf's JSON mapping of the message "
                    "(fields left out keep their defaults)")
        ->required();
    CLI::Option* once = sub->add_flag("--once", once_, "Publish one message and exit (the default)");
    CLI::Option* rate = sub->add_option("--rate", rate_hz_,
                                        "Publish at this many messages a second until Ctrl-C, --count or --duration")
                            ->check(CLI::PositiveNumber);
    sub->add_option("--count", count_, "With --rate: stop after this many messages")
        ->check(CLI::PositiveNumber)
        ->needs(rate);
    sub->add_option("--duration", duration_s_, "With --rate: stop after this many seconds")
        ->check(CLI::PositiveNumber)
        ->needs(rate);
    once->excludes(rate);
    sub->footer(
        "The message is built once from the JSON with the topic's stored schema and published under the topic's "
        "own type (name, serializer, schema hash), so typed subscribers take it as a typed publisher's. Text: one "
        "line when it stops; --json: one document with the topic, its type and serializer, the message's size, "
        "what was published and delivered, and any refusal.\n\n"
        "Exit status: 0 when every message asked for was published (also when no subscriber took it), 1 when "
        "refused (the topic does not exist, is not FlatBuffers or Protobuf or has no stored schema, the JSON does "
        "not match the schema, the message is larger than the topic's chunks) or a publish failed, 2 on a usage "
        "error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    StopOnSignals signals;
    PubReport report;
    report.topic.name = topic_;
    const bool ok = publish(globals, report);
    for (const std::string& refusal : report.refusals) {
      std::fprintf(stderr, "axon: %s\n", refusal.c_str());
    }
    if (globals.json) {
      print_json(report, out);
    } else if (ok) {
      print_text(report, out);
    }
    return ok ? kExitOk : kExitFailed;
  }

 private:
  /// Joins the domain, builds the message and publishes it as asked; false (a refusal in `report`) on failure.
  bool publish(const GlobalOptions& globals, PubReport& report) const {
    auto refuse = [&](std::string why) {
      report.refusals.push_back(std::move(why));
      return false;
    };
    NodeOptions node_options;
    node_options.domain_id = globals.domain_id;
    node_options.pool_publishers = 1;  // one topic; chunk classes as any node's (the config's, else the defaults)
    auto node = Node::create("axon-cli-" + std::to_string(::getpid()), node_options);
    if (!node) {
      return refuse(std::string(node.error().message()));
    }
    auto topic = (*node)->find_topic(topic_);
    if (!topic) {
      if (topic.error().code() == ErrorCode::kNotFound) {
        return refuse(std::string(topic.error().message()) +
                      "; topic pub takes the message's type and schema from the topic, so it needs a publisher or "
                      "a typed subscriber of it running (axon topic list shows the topics)");
      }
      return refuse(std::string(topic.error().message()));
    }
    report.topic = *topic;
    auto encoder = MessageEncoder::create(*topic);
    if (!encoder) {
      return refuse(std::string(encoder.error().message()));
    }
    if (auto parsed = (*encoder)->parse(json_); !parsed) {
      return refuse("topic '" + topic_ + "': the JSON is not a message of " + topic->type.name + ": " +
                    std::string(parsed.error().message()));
    }
    report.message_bytes = (*encoder)->size();
    if (topic->max_payload_bytes != 0 && report.message_bytes > topic->max_payload_bytes) {
      return refuse("topic '" + topic_ + "': the message has " + std::to_string(report.message_bytes) +
                    " bytes, more than the " + std::to_string(topic->max_payload_bytes) +
                    " bytes the topic's chunks hold (its max_payload_bytes); send a smaller message");
    }
    auto publication = (*node)->advertise_any(topic_);
    if (!publication) {
      return refuse(std::string(publication.error().message()));
    }
    if (publication->topic.type.hash != topic->type.hash || publication->topic.type.name != topic->type.name) {
      return refuse("topic '" + topic_ + "' changed its type from " + topic->type.name + " to " +
                    publication->topic.type.name + " while the message was built; run the command again");
    }
    Publisher<Bytes>& publisher = *publication->publisher;

    const bool looping = rate_hz_ > 0;
    const auto period =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(looping ? 1 / rate_hz_ : 0));
    const auto start = Clock::now();
    const auto end =
        duration_s_ > 0
            ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration_s_))
            : Clock::time_point::max();
    auto next = start;
    for (std::uint64_t sent = 0;; ++sent) {
      auto loan = publisher.loan((*encoder)->size());
      if (loan.failed()) {
        return refuse(std::string(loan.error().message()));
      }
      if (loan.exhausted()) {
        ++report.skipped;
        if (!looping) {
          return refuse("topic '" + topic_ + "': no free chunk to publish in: " + publisher.explain_exhausted());
        }
      } else {
        (void)(*encoder)->write((*loan).elements());
        const PublishResult result = publisher.publish(std::move(*loan));
        if (result.failed()) {
          return refuse(std::string(result.error().message()));
        }
        ++report.published;
        report.delivered += result->delivered;
      }
      if (!looping || (count_ != 0 && sent + 1 >= count_)) {
        return true;
      }
      next += period;
      if (!sleep_until(std::min(next, end)) || next >= end) {
        return true;  // Ctrl-C, or --duration is over
      }
    }
  }

  /// Sleeps in slices until `until`; false when a signal asked to stop.
  static bool sleep_until(Clock::time_point until) {
    while (!StopOnSignals::requested()) {
      const auto now = Clock::now();
      if (now >= until) {
        return true;
      }
      std::this_thread::sleep_for(std::min<Clock::duration>(until - now, kSleepSlice));
    }
    return false;
  }

  static void print_text(const PubReport& report, std::FILE* out) {
    std::fprintf(out, "published %llu message%s of %s (%s, %zu bytes) on '%s': %llu deliver%s to subscribers\n",
                 static_cast<unsigned long long>(report.published), report.published == 1 ? "" : "s",
                 report.topic.type.name.c_str(), report.topic.type.serializer.c_str(), report.message_bytes,
                 report.topic.name.c_str(), static_cast<unsigned long long>(report.delivered),
                 report.delivered == 1 ? "y" : "ies");
    if (report.skipped != 0) {
      std::fprintf(out, "skipped %llu for lack of a free chunk (back-pressure)\n",
                   static_cast<unsigned long long>(report.skipped));
    }
  }

  static void print_json(const PubReport& report, std::FILE* out) {
    JsonWriter doc;
    doc.begin_object().member("topic", report.topic.name);
    if (report.topic.type.name.empty()) {  // refused before the topic's record was read
      doc.key("type").null_value().key("serializer").null_value();
    } else {
      doc.member("type", report.topic.type.name).member("serializer", report.topic.type.serializer);
    }
    doc.member("bytes", report.message_bytes)
        .member("published", report.published)
        .member("delivered", report.delivered)
        .member("skipped", report.skipped)
        .key("refusals")
        .begin_array();
    for (const std::string& refusal : report.refusals) {
      doc.value(refusal);
    }
    doc.end_array().end_object();
    std::fprintf(out, "%s\n", doc.text().c_str());
  }

  std::string topic_;
  std::string json_;
  bool once_ = false;
  double rate_hz_ = 0;
  std::uint64_t count_ = 0;
  double duration_s_ = 0;
};

}  // namespace

std::unique_ptr<Command> make_topic_pub_command() { return std::make_unique<PubCommand>(); }

}  // namespace axon::tools
