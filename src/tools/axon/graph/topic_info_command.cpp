// `axon topic info TOPIC`: one topic's type and every endpoint with its node, process and QoS.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/graph/domain_text.hpp"
#include "src/tools/axon/text_table.hpp"

namespace axon::tools {
namespace {

class TopicInfoCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("info", "One topic: its type and every publisher and subscriber on this host");
    sub->add_option("topic", topic_, "The topic's name, as `axon topic list` prints it")->required();
    sub->add_option("--patience-ms", patience_ms_, "How long to wait for each publishing node to hand over its pool")
        ->check(CLI::Range(1, 60'000));
    sub->footer(
        "Exit status: 0, 1 when no such topic has an endpoint on this host (or the registry cannot be read), 2 on a "
        "usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    auto view = read_view(globals);
    if (!view) {
      return report_error(view.error());
    }
    const TopicView* topic = nullptr;
    for (const TopicView& t : view->topics) {
      if (t.name == topic_) {
        topic = &t;
      }
    }
    if (topic == nullptr) {
      std::fprintf(stderr, "axon: no topic '%s' in domain %u on this host (axon topic list shows the topics)\n",
                   topic_.c_str(), globals.domain_id);
      print(stderr, view_notes(*view));
      return kExitFailed;
    }
    auto queues = read_topic_connections(DomainAddress{.domain_id = globals.domain_id, .shm_dir = {}}, *view, topic_,
                                         patience_ms_ * 1'000'000);
    if (!queues) {
      return report_error(queues.error());
    }
    if (globals.json) {
      print(out, json_of(*view, *topic, *queues) + "\n");
    } else {
      print(out, text_of(*view, *topic, *queues));
      for (const std::string& why : queues->unreadable) {
        print(out, "note: counters not read from " + why + "\n");
      }
      print(out, view_notes(*view));
    }
    return kExitOk;
  }

 private:
  static std::string type_line(const TopicView& t) {
    std::string line = fmt::format("type {} ({}, hash {:016x}", t.type_name, t.serializer, t.type_hash);
    if (t.type_size != 0) {
      line += fmt::format(", {} bytes, align {}", t.type_size, t.type_align);
    }
    if (t.max_payload_bytes != 0) {
      line += fmt::format(", at most {} bytes a message", t.max_payload_bytes);
    }
    return line + ")";
  }

  /// The queues an endpoint has (as publisher or as subscriber), summed.
  struct QueueSums {
    std::uint64_t delivered = 0;
    std::uint64_t dropped = 0;
    std::uint64_t queued = 0;
    std::uint64_t depth = 0;
    std::size_t queues = 0;
  };
  static QueueSums sums_of(const EndpointView& e, const TopicConnections& queues) {
    QueueSums sums;
    for (const ConnectionView& c : queues.connections) {
      if ((e.kind == GraphEndpointKind::kPublisher ? c.publisher_id : c.subscriber_id) == e.endpoint_id) {
        sums.delivered += c.delivered;
        sums.dropped += c.dropped_full + c.dropped_oldest + c.dropped_timeout;
        sums.queued += c.queued;
        sums.depth += c.depth;
        ++sums.queues;
      }
    }
    return sums;
  }

  static std::string text_of(const DomainView& view, const TopicView& t, const TopicConnections& queues) {
    TextTable table({"KIND", "ENDPOINT", "NODE", "PID", "ALIVE", "TRANSPORT", "DELIVERED", "DROPPED", "QUEUED", "QOS"});
    for (std::size_t column : {6U, 7U, 8U}) {
      table.set_align(column, Align::kRight);
    }
    for_each_endpoint(
        view, [&t](const EndpointView& e) { return e.topic_slot == t.slot; },
        [&](const EndpointView& e, const TopicView& /*topic*/, const ParticipantView& p) {
          const QueueSums sums = sums_of(e, queues);
          const bool subscriber = e.kind == GraphEndpointKind::kSubscriber;
          table.add_row({kind_word(e.kind), fmt::format("{:x}", e.endpoint_id), p.name, std::to_string(p.pid),
                         alive_text(p), transport_text(e), std::to_string(sums.delivered), std::to_string(sums.dropped),
                         subscriber && sums.queues > 0 ? fmt::format("{}/{}", sums.queued, sums.depth) : "",
                         qos_text(e)});
        });
    return fmt::format("topic {}\n{}\n\n{}", t.name, type_line(t), table.render());
  }

  static std::string json_of(const DomainView& view, const TopicView& t, const TopicConnections& queues) {
    JsonWriter json;
    json.begin_object();
    write_view_members(json, view);
    json.member("name", t.name)
        .member("type", t.type_name)
        .member("serializer", t.serializer)
        .member("type_hash", fmt::format("{:016x}", t.type_hash))
        .member("type_size", t.type_size)
        .member("type_align", t.type_align)
        .member("max_payload_bytes", t.max_payload_bytes);
    json.key("endpoints").begin_array();
    for_each_endpoint(
        view, [&t](const EndpointView& e) { return e.topic_slot == t.slot; },
        [&json](const EndpointView& e, const TopicView& /*topic*/, const ParticipantView& p) {
          json.begin_object()
              .member("kind", kind_word(e.kind))
              .member("endpoint_id", fmt::format("{:x}", e.endpoint_id))
              .member("node", p.name)
              .member("pid", p.pid)
              .member("alive", p.alive)
              .member("transport", e.transport);
          write_qos_members(json, e);
          json.end_object();
        });
    json.end_array().key("queues").begin_array();
    for (const ConnectionView& c : queues.connections) {
      json.begin_object()
          .member("publisher_id", fmt::format("{:x}", c.publisher_id))
          .member("subscriber_id", fmt::format("{:x}", c.subscriber_id))
          .member("delivered", c.delivered)
          .member("dropped_full", c.dropped_full)
          .member("dropped_oldest", c.dropped_oldest)
          .member("dropped_timeout", c.dropped_timeout)
          .member("quarantines", c.quarantines)
          .member("quarantined", c.quarantined)
          .member("rejected", c.rejected)
          .member("high_water", c.high_water)
          .member("queued", c.queued)
          .member("depth", c.depth)
          .end_object();
    }
    json.end_array().key("unreadable").begin_array();
    for (const std::string& why : queues.unreadable) {
      json.value(why);
    }
    json.end_array().end_object();
    return json.text();
  }

  std::string topic_;
  std::int64_t patience_ms_ = 1000;
};

}  // namespace

std::unique_ptr<Command> make_topic_info_command() { return std::make_unique<TopicInfoCommand>(); }

}  // namespace axon::tools
