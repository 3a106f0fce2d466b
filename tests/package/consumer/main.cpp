// Uses an installed axon through find_package(axon) and axon::axon: joins a
// domain of its own, publishes one message to itself and takes it back.
// Exits 0 when the message arrives intact.
#include <unistd.h>

#include <cstdint>
#include <cstdio>

#include <axon/axon.hpp>

namespace {

struct Ping {
  std::uint64_t counter = 0;
  double value = 0.0;
};

int fail(const char* step, const axon::Error& error) {
  std::fprintf(stderr, "consumer: %s failed: %.*s\n", step, static_cast<int>(error.message().size()),
               error.message().data());
  return 1;
}

}  // namespace

int main() {
  // A domain nobody else uses: this process's id. A small pool is enough.
  const auto domain = static_cast<std::uint32_t>(::getpid());
  auto node = axon::Node::create("package_consumer",
                                 {.domain_id = domain, .chunk_classes = {{.payload_bytes = 256, .count = 8}}});
  if (!node) {
    return fail("Node::create", node.error());
  }
  auto subscriber = node->subscribe<Ping>("package/ping");
  if (!subscriber) {
    return fail("subscribe", subscriber.error());
  }
  auto publisher = node->advertise<Ping>("package/ping");
  if (!publisher) {
    return fail("advertise", publisher.error());
  }

  auto loan = publisher->loan();
  if (!loan) {
    return fail("loan", loan.error());
  }
  loan->counter = 42;  // Result's -> forwards to the Loan's -> (the message)
  loan->value = 2.5;
  auto status = publisher->publish(std::move(*loan));
  if (!status) {
    return fail("publish", status.error());
  }
  if (status->delivered != 1) {
    std::fprintf(stderr, "consumer: publish delivered to %u subscribers, expected 1\n", status->delivered);
    return 1;
  }

  auto sample = subscriber->take();
  if (!sample) {
    return fail("take", sample.error());
  }
  if (sample->counter != 42 || sample->value != 2.5 || sample.value().info().sequence != 1) {
    std::fprintf(stderr, "consumer: took counter %llu value %f sequence %llu, expected 42, 2.5, 1\n",
                 static_cast<unsigned long long>(sample->counter), sample->value,
                 static_cast<unsigned long long>(sample.value().info().sequence));
    return 1;
  }
  std::printf("consumer: took message %llu from domain %u\n", static_cast<unsigned long long>(sample->counter), domain);
  return 0;
}
