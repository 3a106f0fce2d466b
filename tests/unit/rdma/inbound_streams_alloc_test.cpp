// The receive side's data path allocates nothing (inbound_streams.hpp): once
// a stream is open, a write delivered through its mirror, the re-grant and
// its GRANT message, and the subscriber's take and release, 200 times over,
// make no allocation. The link is a recording double here (its send_control()
// copies into a fixed buffer), so only InboundStreams and the shared-memory
// ports are counted; the loopback link's queues would allocate themselves.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "tests/support/allocation_hooks.hpp"
#include "tests/support/common/temp_dir.hpp"
#include "transports/rdma/control_message.hpp"
#include "transports/rdma/immediate.hpp"
#include "transports/rdma/inbound_streams.hpp"
#include "transports/shm/shm_transport.hpp"

namespace axon::rdma {
namespace {

namespace allocations = axon::test::allocations;

constexpr std::uint64_t kTopicId = 0xA110C;
constexpr std::uint32_t kStream = 1;
constexpr std::uint32_t kBytes = 200;

/// B's end of a link that keeps the last control message it was given.
class RecordingLink final : public LinkPort {
 public:
  explicit RecordingLink(const shm::ChunkArea& area) : area_(area), grants_(table_of(area)), slots_(kLinkGrantBudget) {}

  [[nodiscard]] std::uint64_t peer() const noexcept override { return 0xA1; }
  [[nodiscard]] bool active() const noexcept override { return false; }
  [[nodiscard]] PeerRegion peer_region() const noexcept override { return {}; }
  [[nodiscard]] Result<SendOutcome> send_control(std::span<const std::byte> message) noexcept override {
    std::memcpy(last_.data(), message.data(), message.size());
    last_bytes_ = message.size();
    ++sent_;
    return SendOutcome::kPosted;
  }
  [[nodiscard]] Result<WriteOutcome> post_write(const LinkWrite& /*write*/, SentChunk& /*pinned*/) noexcept override {
    return WriteOutcome::kSendQueueFull;  // the receive side never writes
  }
  [[nodiscard]] GrantTable& grants() noexcept override { return grants_; }
  [[nodiscard]] GrantedSlots& granted_slots() noexcept override { return slots_; }
  void fail(std::string_view /*why*/) noexcept override { failed_ = true; }

  /// The last message sent, parsed against this node's own region.
  [[nodiscard]] ControlMessage last() const {
    ControlMessage message;
    const PeerRegion own{.base = reinterpret_cast<std::uintptr_t>(area_.base), .length = area_.bytes};
    EXPECT_EQ(parse_control(std::span<const std::byte>(last_.data(), last_bytes_), own, message), ControlError::kOk);
    return message;
  }
  [[nodiscard]] bool failed() const noexcept { return failed_; }
  /// Control messages sent so far.
  [[nodiscard]] std::size_t sent() const noexcept { return sent_; }

 private:
  static GrantTable table_of(const shm::ChunkArea& area) {
    std::vector<GrantClass> classes;
    for (const shm::ChunkClassExtent& c : area.class_list()) {
      classes.push_back(GrantClass{.capacity_bytes = c.payload_capacity, .chunk_count = c.chunk_count});
    }
    return GrantTable::create(classes, std::uint32_t{1} << 30).value();
  }

  shm::ChunkArea area_;
  GrantTable grants_;
  GrantedSlots slots_;
  std::array<std::byte, kControlSlotBytes> last_{};
  std::size_t sent_ = 0;
  std::size_t last_bytes_ = 0;
  bool failed_ = false;
};

TEST(InboundStreamsAllocations, DeliveryRegrantAndTakeMakeNoAllocation) {
  axon::test::TempDir dir{"axon-inbound-alloc"};
  auto created = shm::ShmTransport::create(
      shm::ShmConfig{.domain_id = 44, .node_name = "receiver", .shm_dir = dir.path(), .chunk_classes = {{256, 64}}});
  ASSERT_TRUE(created.ok()) << created.error().message();
  const std::shared_ptr<shm::ShmTransport> node = *created;
  const TopicDescriptor topic{.name = "ticks", .type = TypeIdentity{.name = "bytes", .hash = 7, .size = 1, .align = 1}};
  auto subscribed = node->subscribe(topic, SubscriberQos{.depth = 16});
  ASSERT_TRUE(subscribed.ok());
  const std::shared_ptr<SubscriberPort> subscriber = *subscribed;
  auto sut = InboundStreams::create(
      node,
      [&](std::uint64_t id) {
        return id == kTopicId ? std::optional<InboundTopic>(InboundTopic{.descriptor = topic}) : std::nullopt;
      },
      InboundSettings{});
  ASSERT_TRUE(sut.ok());
  RecordingLink link(node->own_chunk_area());
  (*sut)->on_link_up(link);
  std::array<std::byte, kOpenBytes> open{};
  ASSERT_EQ(
      encode_open(open, kStream, OpenFields{.topic_id = kTopicId, .type_hash = 7, .largest_message_bytes = kBytes}),
      kOpenBytes);
  ControlMessage message;
  ASSERT_EQ(parse_control(open, PeerRegion{}, message), ControlError::kOk);
  (*sut)->on_control(link, message);
  // The sender's credits: a ring of the grant entries received.
  std::array<GrantEntry, kLinkGrantBudget> credits{};
  std::size_t head = 0;
  std::size_t count = 0;
  std::size_t heard = 0;  // control messages the sender has read
  const auto take_grants = [&] {
    if (link.sent() == heard) {
      return;  // no GRANT since the last one: regrants go out in batches
    }
    heard = link.sent();
    const ControlMessage grant = link.last();
    ASSERT_EQ(grant.kind, ControlKind::kGrant);
    for (std::uint32_t i = 0; i < grant.grant.count; ++i) {
      credits[(head + count++) % credits.size()] = grant.grant.entry(i);
    }
  };
  take_grants();
  ASSERT_EQ(count, 8U);
  std::uint64_t delivered = 0;
  const auto one_message = [&](std::uint32_t n) {
    const GrantEntry g = credits[head];
    head = (head + 1) % credits.size();
    --count;
    // The grant is an address in this process's mapping of the pool (what the card would write).
    auto* const chunk = reinterpret_cast<std::byte*>(g.address);  // NOLINT(performance-no-int-to-ptr)
    std::memset(chunk, static_cast<int>(n & 0xFF), kBytes);
    const auto immediate =
        encode_immediate({.size_class = g.size_class, .slot = g.slot, .length = kBytes}, g.capacity_bytes);
    const ResolvedWrite write = link.grants().resolve(immediate.value_or(0), kBytes);
    (*sut)->on_write(link, write);
    take_grants();
    auto sample = subscriber->take();
    if (sample.ok()) {
      delivered += sample->payload[0] == static_cast<std::byte>(n & 0xFF) ? 1 : 0;
      subscriber->release(*sample);
    }
  };
  for (std::uint32_t n = 0; n < 20; ++n) {
    one_message(n);  // warm-up: the subscriber links the mirror, the caches fill
  }

  allocations::start();
  for (std::uint32_t n = 20; n < 220; ++n) {
    one_message(n);
  }
  const std::uint64_t allocated = allocations::stop();

  EXPECT_FALSE(link.failed());
  EXPECT_EQ(delivered, 220U);
  EXPECT_GE(count, 4U) << "the sender kept fewer than half its credits";
  if (allocations::kCounted) {
    EXPECT_EQ(allocated, 0U);
  }
  (*sut)->on_link_lost(link);
}

}  // namespace
}  // namespace axon::rdma
