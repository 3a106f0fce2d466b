// Fixed sizes of the shared-memory layout. Changing any of them changes the
// ABI hash, so processes built with different values refuse each other.
#pragma once

#include <cstddef>
#include <cstdint>

namespace axon::shm {

inline constexpr std::size_t kCacheLine = 64;

inline constexpr std::uint32_t kLayoutVersion =
    12;  ///< 5: pools sized by config, larger registry; 6: the registry's graph word; 7: registry tables sized by
         ///< the domain's limits (stored in its head); 8: the wide holder ledger; 9: publisher blocks sized by
         ///< pool.publishers (their count stored in the pool segment); 10: publishers per topic in the
         ///< registry's limits; 11: the topic's type version and schema file in TopicEntry,
         ///< the endpoint's statistics slot in EndpointEntry; 12: the endpoint's transport in EndpointEntry.

/// Registry tables (one registry per domain), sized per domain by its limits
/// (RegistryLimits: NodeOptions::domain_limits, the deployment file's
/// `limits:`); these are the defaults and the largest values accepted.
/// Bytes each: a participant 104, a topic 384, a publisher 64, a subscriber
/// 128 (64 + 64 for its wake word), plus a 192-byte head: 1.53 MiB per domain
/// with the defaults. Each registry scan (advertise, subscribe, a node
/// leaving) walks the tables, so their cost grows with the limits.
inline constexpr std::uint32_t kDefaultParticipants = 256;
inline constexpr std::uint32_t kDefaultTopics = 2048;
inline constexpr std::uint32_t kDefaultPublishers = 4096;
inline constexpr std::uint32_t kDefaultSubscribers = 4096;
inline constexpr std::uint32_t kMaxParticipantsLimit = 4096;
inline constexpr std::uint32_t kMaxTopicsLimit = 65536;
inline constexpr std::uint32_t kMaxPublishersLimit = 65536;
inline constexpr std::uint32_t kMaxSubscribersLimit = 65536;
/// Publishers one subscriber reads from (limits.publishers_per_topic): the
/// size of each subscriber's link table, 104 bytes a link in the subscriber's
/// process (ShmSubscriberPort::Link), allocated when it subscribes; nothing
/// in shared memory but this number in the registry's head. take() walks
/// the links in use, so the maximum bounds that walk: 1024 links are 104 KiB
/// per subscriber.
inline constexpr std::uint32_t kDefaultPublishersPerTopic = 64;
inline constexpr std::uint32_t kMaxPublishersPerTopicLimit = 1024;
inline constexpr std::size_t kMaxTopicNameBytes = 128;
inline constexpr std::size_t kMaxTypeNameBytes = 128;
inline constexpr std::size_t kMaxParticipantNameBytes = 64;

/// Per participant chunk pool.
inline constexpr std::uint32_t kMaxSizeClasses = 16;
/// Publisher blocks of a node's pool (pool.publishers, NodeOptions::
/// pool_publishers): the default and the largest value accepted. 576 bytes
/// of shared memory each (sizeof(PublisherBlock)): 18 KiB with the default,
/// 2.25 MiB at the maximum. ChunkHeader::publisher_block is 16 bits wide.
inline constexpr std::uint32_t kDefaultPublishersPerNode = 32;
inline constexpr std::uint32_t kMaxPublishersPerNode = 4096;
/// Connections of one publisher: the bits of a chunk's holder ledger (see
/// chunk_header.hpp, holder_bits.hpp). Word 0: bit 63 the publisher's own
/// loan, bit 62 its transient-local history, bit 61 its network resend
/// history, bits 0..60 connections 0..60; two more words: connections
/// 61..188, with a holder count.
inline constexpr std::uint32_t kMaxSubscribersPerPublisher = 189;
/// Messages a transient-local publisher keeps for late joiners.
inline constexpr std::uint32_t kMaxDurabilityDepth = 16;
/// Entries a subscriber queue can hold at most (its depth is 1..this). Each
/// entry is a cache line: 16 KiB per connection.
inline constexpr std::uint32_t kRingCapacity = 256;

}  // namespace axon::shm
