// `axon topic echo TOPIC`: prints each message of a topic as JSON, from the schema the topic stores
// (docs/tools.md, "axon topic echo").
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/json_writer.hpp"
#include "src/tools/axon/topic/json_member.hpp"
#include "src/tools/axon/topic/message_printer.hpp"
#include "src/tools/axon/topic/watch.hpp"

namespace axon::tools {
namespace {

class EchoCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("echo",
                                       "Print a topic's messages as JSON (FlatBuffers and Protobuf from "
                                       "the schema the topic stores; raw structs as hex)");
    add_watch_options(*sub, options_);
    sub->add_flag("--once", once_, "Stop after the first message (--count 1)");
    sub->add_option("--field", field_,
                    "Print only this field of each message (a dotted path: pose.position.x, "
                    "objects.0.id)");
    sub->footer(
        "Runs until Ctrl-C, --duration or --count. Text: one JSON value per line, each message's. --json: one "
        "document when it stops, with the topic, its type and every message (sequence, publish time, publisher, "
        "size and the message).\n\n"
        "Exit status: 0 when it stopped as asked, 1 when the topic had no publisher within --wait or the domain "
        "could not be joined, 2 on a usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    if (once_) {
      options_.count = 1;
    }
    StopOnSignals signals;
    auto watch = open_watch(globals, options_);
    if (!watch) {
      return report_failure(watch.error());
    }
    const TopicRecord& topic = watch->subscription.topic;
    const MessagePrinter printer(topic);
    if (!printer.hex_reason().empty()) {
      std::fprintf(stderr, "axon: topic '%s' (%s, %s): printing messages as hex: %s\n", topic.name.c_str(),
                   topic.type.name.c_str(), topic.type.serializer.c_str(), printer.hex_reason().c_str());
    }
    std::vector<std::string> printed;  // --json: the messages' entries, written at the end
    bool told_malformed = false;
    run_watch(*watch, options_, [&](const Sample<Bytes>& sample) {
      auto json = printer.to_json(sample.elements());
      if (!json) {
        if (!told_malformed) {
          std::fprintf(stderr, "axon: %s\n", std::string(json.error().message()).c_str());
          told_malformed = true;
        }
        json = printer.hex_json(sample.elements());
      }
      std::string value = *json;
      if (!field_.empty()) {
        std::string why;
        auto member = json_member(*json, field_, &why);
        value = member ? std::string(*member) : "null";
        if (!member && !told_field_) {
          std::fprintf(stderr, "axon: --field %s: %s; printing null\n", field_.c_str(), why.c_str());
          told_field_ = true;
        }
      }
      if (globals.json) {
        printed.push_back(entry(sample.info(), value));
      } else {
        std::fprintf(out, "%s\n", value.c_str());
        std::fflush(out);
      }
    });
    if (globals.json) {
      JsonWriter doc;
      doc.begin_object()
          .member("topic", topic.name)
          .member("type", topic.type.name)
          .member("serializer", topic.type.serializer)
          .member("printed_as", printer.hex_reason().empty() ? "fields" : "hex");
      if (!field_.empty()) {
        doc.member("field", field_);
      }
      doc.key("messages").begin_array();
      for (const std::string& one : printed) {
        doc.json_value(one);
      }
      doc.end_array().end_object();
      std::fprintf(out, "%s\n", doc.text().c_str());
    }
    return kExitOk;
  }

 private:
  static std::string entry(const SampleInfo& info, const std::string& message) {
    JsonWriter json;
    json.begin_object()
        .member("sequence", info.sequence)
        .member("publish_time_ns", info.publish_time_ns)
        .member("publisher_id", info.publisher_id)
        .member("bytes", info.payload_bytes)
        .key("message")
        .json_value(message)
        .end_object();
    return json.text();
  }

  WatchOptions options_;
  bool once_ = false;
  std::string field_;
  bool told_field_ = false;
};

}  // namespace

std::unique_ptr<Command> make_topic_echo_command() { return std::make_unique<EchoCommand>(); }

}  // namespace axon::tools
