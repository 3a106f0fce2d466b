// Two "hosts" of UDP tests on loopback, no root needed: a deployment config
// with hosts alpha (127.0.0.1) and beta (127.0.0.2) as static peers, node
// `sender` on alpha and `receiver` on beta, a domain and discovery port of
// the test's own, and a shared-memory directory per host (a and b), all in a
// temporary directory removed at the end.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "axon/network.hpp"
#include "axon/node.hpp"
#include "axon/options.hpp"

namespace axon::test {

class TwoHostLoopback {
 public:
  struct Settings {
    std::string_view topics;  ///< The config's `topics:` entries, one "  - {...}" line each.
    std::uint32_t liveliness_timeout_ms = 1000;
    std::uint32_t history_depth = 0;  ///< udp.history_depth; 0: the default.
    std::string_view node_pool;       ///< Both nodes' `pool:` (a YAML flow mapping); empty: the default.
    std::string_view receive_buffer_bytes = "16 MiB";  ///< udp.receive_buffer_bytes.
    std::string_view security;                         ///< udp.security as a YAML flow mapping; empty: none.
  };

  /// `name`: the temporary directory's prefix.
  TwoHostLoopback(std::string_view name, const Settings& settings)
      : unique_(static_cast<unsigned>(::getpid()) * 13U + static_cast<unsigned>(counter_++) * 7919U),
        port_(free_port(unique_)),
        domain_(100000 + unique_ % 100000),
        dir_(std::filesystem::temp_directory_path() / (std::string(name) + "_" + std::to_string(unique_))) {
    std::filesystem::create_directories(dir_ / "a");
    std::filesystem::create_directories(dir_ / "b");
    std::ofstream out(config());
    const std::string pool = settings.node_pool.empty() ? "" : ", pool: " + std::string(settings.node_pool);
    out << "domain: " << domain_ << R"(
hosts:
  - {name: alpha, address: 127.0.0.1}
  - {name: beta, address: 127.0.0.2}
nodes:
  - {name: sender, host: alpha)"
        << pool << R"(}
  - {name: receiver, host: beta)"
        << pool << R"(}
topics:
)" << settings.topics
        << R"(udp:
  discovery:
    static_peers: [alpha, beta]
    port: )"
        << port_ << "\n  heartbeat_period_ms: 20\n  liveliness_timeout_ms: " << settings.liveliness_timeout_ms
        << "\n  receive_buffer_bytes: " << settings.receive_buffer_bytes << "\n";
    if (settings.history_depth != 0) {
      out << "  history_depth: " << settings.history_depth << "\n";
    }
    if (!settings.security.empty()) {
      out << "  security: " << settings.security << "\n";
    }
  }
  TwoHostLoopback(const TwoHostLoopback&) = delete;
  TwoHostLoopback& operator=(const TwoHostLoopback&) = delete;
  ~TwoHostLoopback() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  /// Options of a node of the config whose shared memory is in `shm` (a or b).
  [[nodiscard]] NodeOptions options(const std::string& shm) const {
    NodeOptions options;
    options.config_path = config().string();
    options.shm_dir = shm_dir(shm);
    return options;
  }
  /// Node `name` of the config with its shared memory in `shm`; nullptr
  /// (and the test failed) when it could not be created.
  [[nodiscard]] std::shared_ptr<Node> node(const std::string& name, const std::string& shm) const {
    auto created = Node::create(name, options(shm));
    EXPECT_TRUE(created) << created.error().message();
    return created ? *created : nullptr;
  }

  [[nodiscard]] std::filesystem::path config() const { return dir_ / "deploy.yaml"; }
  [[nodiscard]] std::string shm_dir(const std::string& shm) const { return (dir_ / shm).string(); }
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] std::uint32_t domain() const noexcept { return domain_; }

 private:
  /// A discovery port below the kernel's ephemeral range (32768..60999 by
  /// default: another test's sockets take ports there at random) that
  /// neither address has bound now; tests running at once try different ones.
  static std::uint16_t free_port(unsigned unique) {
    constexpr unsigned kFirst = 12000;
    constexpr unsigned kCount = 20000;  // up to 31999
    for (unsigned attempt = 0; attempt < 64; ++attempt) {
      const auto port = static_cast<std::uint16_t>(kFirst + (unique + attempt * 104729U) % kCount);
      if (unbound(port, "127.0.0.1") && unbound(port, "127.0.0.2")) {
        return port;
      }
    }
    ADD_FAILURE() << "no free UDP port on 127.0.0.1 and 127.0.0.2 in " << kFirst << ".." << kFirst + kCount - 1;
    return static_cast<std::uint16_t>(kFirst + unique % kCount);
  }
  static bool unbound(std::uint16_t port, const char* address) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      return false;
    }
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(port);
    ::inet_pton(AF_INET, address, &at.sin_addr);
    const bool bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&at), sizeof(at)) == 0;
    ::close(fd);
    return bound;
  }

  static inline int counter_ = 0;
  unsigned unique_;
  std::uint16_t port_;
  std::uint32_t domain_;
  std::filesystem::path dir_;
};

/// Whether `node` sends `topic` to `host` over UDP (its subscribers were announced).
inline bool routed_to(const Node& node, std::string_view topic, std::string_view host) {
  for (const TopicRoute& route : node.routes(topic)) {
    if (route.host == host && route.transport == TransportKind::kUdp && route.subscribers > 0) {
      return true;
    }
  }
  return false;
}

}  // namespace axon::test
