// axon_slice_peer: the other process of the slice and bytes tests.
//   axon_slice_peer <command> key=value...
// Commands:
//   publish   elem=u8|f32|point sizes=N,N,...   a Slice<elem> message of each size
//   bytes     sizes=N,N,... [carries=f32]       a Bytes message of each size, on an
//             untyped topic, or carrying Slice<float>'s identity
//   subscribe elem=u8|f32|f64|point [linger=1]  tries to subscribe; prints
//             "SUBSCRIBED" (then stays, with linger=1) or "REFUSED <error>"
// Every command: topic=NAME, and either domain=N (shared memory; small_pool=1
// gives the node classes of 256 B and 64 KiB) or config=FILE node=NAME
// shm_dir=DIR (the UDP tests' hosts). publish and bytes wait for a
// subscriber (on another host, for config=), print "PUBLISHED <count>",
// then linger until the subscribers left (at most 20 s) and exit 0.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/slice_patterns.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using axon::test::SlicePoint;

struct Args {
  std::map<std::string, std::string> values;
  [[nodiscard]] std::string str(const std::string& key, const std::string& fallback = "") const {
    auto it = values.find(key);
    return it == values.end() ? fallback : it->second;
  }
  [[nodiscard]] std::vector<std::size_t> sizes() const {
    std::vector<std::size_t> out;
    const std::string list = str("sizes");
    for (std::size_t at = 0; at < list.size();) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      out.push_back(std::strtoull(list.substr(at, comma - at).c_str(), nullptr, 10));
      at = comma + 1;
    }
    return out;
  }
};

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

[[noreturn]] void fail(const std::string& what) {
  say("ERROR " + what);
  std::exit(2);  // NOLINT(concurrency-mt-unsafe): the peer ends here, whatever its threads do
}

std::shared_ptr<axon::Node> make_node(const Args& args) {
  axon::NodeOptions options;
  if (args.values.contains("config")) {
    options.config_path = args.str("config");
    options.shm_dir = args.str("shm_dir");
  } else {
    options.domain_id = static_cast<std::uint32_t>(std::strtoul(args.str("domain").c_str(), nullptr, 10));
  }
  if (args.str("small_pool") == "1") {
    options.chunk_classes = {{.payload_bytes = 256, .count = 64}, {.payload_bytes = 64 * 1024, .count = 16}};
  }
  auto node = axon::Node::create(args.str("node", "slice-peer"), options);
  if (!node) {
    fail(std::string(node.error().message()));
  }
  return *node;
}

/// Subscribers on this host, or (with a config) on another host.
template <class P>
std::uint32_t subscribers(const axon::Node& node, const P& pub, bool remote) {
  if (!remote) {
    return pub.subscriber_count();
  }
  std::uint32_t n = 0;
  for (const axon::TopicRoute& route : node.routes(pub.topic())) {
    n += route.transport == axon::TransportKind::kUdp ? route.subscribers : 0;
  }
  return n;
}

template <class P>
void wait_for_subscribers(const axon::Node& node, const P& pub, bool remote, bool present) {
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while ((subscribers(node, pub, remote) > 0) != present) {
    if (Clock::now() > deadline) {
      if (present) {
        fail("timed out waiting for a subscriber");
      }
      return;  // lingered long enough
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

/// Sends one message of each size (loan(n), filled, published), retrying
/// while the pool is exhausted (back-pressure).
template <class T, class Fill>
void publish_sizes(const Args& args, const Fill& fill) {
  auto node = make_node(args);
  const bool remote = args.values.contains("config");
  auto pub = [&] {
    if constexpr (std::is_same_v<T, axon::Bytes>) {
      return args.str("carries") == "f32"
                 ? node->advertise_bytes(args.str("topic"), axon::type_identity_of<axon::Slice<float>>())
                 : node->advertise<axon::Bytes>(args.str("topic"));
    } else {
      return node->advertise<T>(args.str("topic"));
    }
  }();
  if (!pub) {
    fail(std::string(pub.error().message()));
  }
  say("READY");
  wait_for_subscribers(*node, **pub, remote, true);
  std::uint64_t sequence = 0;
  for (const std::size_t n : args.sizes()) {
    ++sequence;
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    auto loan = (*pub)->loan(n);
    while (loan.exhausted() && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      loan = (*pub)->loan(n);
    }
    if (!loan) {
      fail("loan(" + std::to_string(n) + "): " + std::string(loan.error().message()));
    }
    fill(**loan, sequence);
    if (auto status = (*pub)->publish(std::move(*loan)); !status) {
      fail("publish: " + std::string(status.error().message()));
    }
  }
  say("PUBLISHED " + std::to_string(sequence));
  wait_for_subscribers(*node, **pub, remote, false);
}

template <class E>
void publish_slices(const Args& args) {
  publish_sizes<axon::Slice<E>>(args, [](std::span<E> out, std::uint64_t seq) { axon::test::fill_slice(out, seq); });
}

void publish_bytes(const Args& args) {
  publish_sizes<axon::Bytes>(args, [&](std::span<std::byte> out, std::uint64_t seq) {
    if (args.str("carries") == "f32") {  // whole floats, as the typed subscriber checks them
      auto floats = std::span(reinterpret_cast<float*>(out.data()), out.size() / sizeof(float));
      axon::test::fill_slice(floats, seq);
    } else {
      axon::test::fill_slice(std::span(reinterpret_cast<std::uint8_t*>(out.data()), out.size()), seq);
    }
  });
}

template <class E>
void try_subscribe(const Args& args) {
  auto node = make_node(args);
  auto sub = node->subscribe<axon::Slice<E>>(args.str("topic"));
  say(sub ? "SUBSCRIBED" : "REFUSED " + std::string(sub.error().message()));
  if (sub && args.str("linger") == "1") {  // stays subscribed until killed (20 s at most)
    std::this_thread::sleep_for(std::chrono::seconds(20));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fail("usage: axon_slice_peer <command> key=value...");
  }
  Args args;
  for (int i = 2; i < argc; ++i) {
    const std::string kv = argv[i];
    const auto eq = kv.find('=');
    args.values[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
  }
  const std::string command = argv[1];
  const std::string elem = args.str("elem", "u8");
  if (command == "publish") {
    elem == "f32"     ? publish_slices<float>(args)
    : elem == "point" ? publish_slices<SlicePoint>(args)
                      : publish_slices<std::uint8_t>(args);
  } else if (command == "bytes") {
    publish_bytes(args);
  } else if (command == "subscribe") {
    elem == "f32"     ? try_subscribe<float>(args)
    : elem == "f64"   ? try_subscribe<double>(args)
    : elem == "point" ? try_subscribe<SlicePoint>(args)
                      : try_subscribe<std::uint8_t>(args);
  } else {
    fail("unknown command " + command);
  }
  return 0;
}
