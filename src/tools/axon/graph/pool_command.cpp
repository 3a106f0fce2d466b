// `axon pool [NODE]`: each node's chunks per class, who holds them and since when: the tool that finds a leaked
// loan or a subscriber that holds its samples.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/doctor/check.hpp"
#include "src/tools/axon/graph/domain_text.hpp"
#include "src/tools/axon/text_table.hpp"

namespace axon::tools {
namespace {

std::string bytes_text(std::uint64_t bytes) {
  if (bytes >= 1024ULL * 1024 && bytes % (1024ULL * 1024) == 0) {
    return fmt::format("{} MiB", bytes / (1024ULL * 1024));
  }
  if (bytes >= 1024 && bytes % 1024 == 0) {
    return fmt::format("{} KiB", bytes / 1024);
  }
  return fmt::format("{} B", bytes);
}

std::string age_text(std::int64_t ns) {
  if (ns < 0) {
    return "-";
  }
  if (ns < 1'000'000) {
    return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
  }
  if (ns < 1'000'000'000) {
    return fmt::format("{:.1f} ms", static_cast<double>(ns) / 1e6);
  }
  return fmt::format("{:.1f} s", static_cast<double>(ns) / 1e9);
}

class PoolCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("pool", "Chunks of each node's pool: free, loaned, held by whom, oldest held");
    sub->add_option("node", node_, "Only the nodes of this name (default: every node of the domain on this host)");
    sub->add_option("--patience-ms", patience_ms_, "How long to wait for each node to hand over its pool")
        ->check(CLI::Range(1, 60'000));
    sub->footer(
        "Each node is asked for its pool on its socket, as nodes ask each other, and the pool is mapped read-only "
        "and counted chunk by chunk (an estimate while messages flow). OLDEST is the age of the oldest published "
        "chunk still in use: a subscriber that holds samples, or a queue nobody drains, shows there. Exit status: "
        "0, 1 when a node's pool could not be read (stopped, dead) or no node has that name, 2 on a usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    auto pools =
        read_pool_views(DomainAddress{.domain_id = globals.domain_id, .shm_dir = {}}, node_, patience_ms_ * 1'000'000);
    if (!pools) {
      return report_error(pools.error());
    }
    if (pools->empty()) {
      std::fprintf(stderr, "axon: %s in domain %u on this host (axon node list shows the nodes)\n",
                   node_.empty() ? "no node" : fmt::format("no node '{}'", node_).c_str(), globals.domain_id);
      return kExitFailed;
    }
    bool all_read = true;
    JsonWriter json;
    json.begin_object().member("domain", globals.domain_id).key("pools").begin_array();
    std::string text;
    for (const NodePoolView& pool : *pools) {
      all_read = all_read && pool.unreadable.empty();
      add_json(json, pool);
      text += text_of(pool);
    }
    json.end_array().end_object();
    print(out, globals.json ? json.text() + "\n" : text);
    return all_read ? kExitOk : kExitFailed;
  }

 private:
  static std::string text_of(const NodePoolView& pool) {
    std::string text = fmt::format("node {} (pid {}): pool {}\n", pool.node.name, pool.node.pid,
                                   doctor::format_bytes(pool.pool_bytes));
    if (!pool.unreadable.empty()) {
      return text + "  not read: " + pool.unreadable + "\n\n";
    }
    TextTable table({"CLASS", "CHUNKS", "FREE", "LOANED", "SUBSCRIBERS", "HISTORY", "NETWORK", "OLDEST"});
    for (std::size_t column = 0; column < 8; ++column) {
      table.set_align(column, Align::kRight);
    }
    std::string holders;
    for (const PoolClassView& c : pool.classes) {
      table.add_row({bytes_text(c.payload_bytes), std::to_string(c.total_chunks), std::to_string(c.free_chunks),
                     std::to_string(c.loaned), std::to_string(c.by_subscribers), std::to_string(c.in_history),
                     std::to_string(c.on_network), age_text(c.oldest_in_use_age_ns)});
      for (const PoolPublisherShare& p : c.publishers) {
        holders += fmt::format("  {}: {} chunks in use by the publisher of {}\n", bytes_text(c.payload_bytes), p.chunks,
                               p.topic);
      }
      for (const PoolHolderView& h : c.holders) {
        holders +=
            fmt::format("  {}: {} chunks held by the subscriber of {} in node {} (pid {}), oldest {}\n",
                        bytes_text(c.payload_bytes), h.chunks, h.topic, h.node, h.pid, age_text(h.oldest_age_ns));
      }
    }
    return text + table.render() + holders + "\n";
  }

  static void add_json(JsonWriter& json, const NodePoolView& pool) {
    json.begin_object()
        .member("node", pool.node.name)
        .member("pid", pool.node.pid)
        .member("alive", pool.node.alive)
        .member("pool_bytes", pool.pool_bytes)
        .member("read", pool.unreadable.empty())
        .member("unreadable", pool.unreadable);
    json.key("classes").begin_array();
    for (const PoolClassView& c : pool.classes) {
      json.begin_object()
          .member("payload_bytes", c.payload_bytes)
          .member("total", c.total_chunks)
          .member("free", c.free_chunks)
          .member("loaned", c.loaned)
          .member("by_subscribers", c.by_subscribers)
          .member("in_history", c.in_history)
          .member("on_network", c.on_network)
          .member("oldest_in_use_age_ns", c.oldest_in_use_age_ns);
      json.key("publishers").begin_array();
      for (const PoolPublisherShare& p : c.publishers) {
        json.begin_object().member("topic", p.topic).member("chunks", p.chunks).end_object();
      }
      json.end_array().key("holders").begin_array();
      for (const PoolHolderView& h : c.holders) {
        json.begin_object()
            .member("topic", h.topic)
            .member("node", h.node)
            .member("pid", h.pid)
            .member("chunks", h.chunks)
            .member("oldest_age_ns", h.oldest_age_ns)
            .end_object();
      }
      json.end_array().end_object();
    }
    json.end_array().end_object();
  }

  std::string node_;
  std::int64_t patience_ms_ = 1000;
};

}  // namespace

std::unique_ptr<Command> make_pool_command() { return std::make_unique<PoolCommand>(); }

}  // namespace axon::tools
