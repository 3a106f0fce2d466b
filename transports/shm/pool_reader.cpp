// read_pool_views(): each node's pool asked for on its socket (as peers ask),
// mapped read-only, checked as a peer's pool is, and counted chunk by chunk:
// who holds what, and since when. Everything in the pool was written by
// another process: every index is checked before it is used.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <new>

#include "axon/domain_view.hpp"
#include "src/base/clock.hpp"
#include "src/base/errors.hpp"
#include "transports/shm/abi_hash.hpp"
#include "transports/shm/chunk_pool.hpp"
#include "transports/shm/chunk_reservation.hpp"
#include "transports/shm/domain_files.hpp"
#include "transports/shm/fd_channel.hpp"
#include "transports/shm/pool_segment.hpp"
#include "transports/shm/segment.hpp"

namespace axon {
namespace {

using shm::ChunkHeader;
using shm::ChunkPool;
using shm::Connection;
using shm::MappedSegment;
using shm::PoolLayout;
using shm::PoolSegment;
using shm::PublisherBlock;

/// The pool descriptor the node at `path` hands out, within `patience_ns`.
Result<int> ask_pool_fd(const std::string& path, std::int64_t patience_ns) {
  auto socket = shm::start_fd_request(path);
  if (!socket) {
    return socket.error();
  }
  const std::int64_t give_up_ns = monotonic_now_ns() + patience_ns;
  Result<int> received = -1;
  for (;;) {
    received = shm::try_receive_fd(*socket, path);
    const std::int64_t left_ns = give_up_ns - monotonic_now_ns();
    if (!received || *received >= 0 || left_ns <= 0) {
      break;
    }
    pollfd pfd{.fd = *socket, .events = POLLIN, .revents = 0};
    (void)::poll(&pfd, 1, static_cast<int>(std::max<std::int64_t>(1, left_ns / 1'000'000)));
  }
  ::close(*socket);
  if (received && *received < 0) {
    return Error(ErrorCode::kTimeout,
                 fmt::format("no answer within {} ms: the node is stopped (SIGSTOP, a debugger) or too busy to serve "
                             "its socket",
                             patience_ns / 1'000'000));
  }
  return received;
}

/// A pool mapped read-only, with its tables checked.
struct ReadOnlyPool {
  MappedSegment mapping;
  PoolLayout layout;
  const PublisherBlock* blocks = nullptr;
  const Connection* connections = nullptr;
  ChunkPool chunks;
};

Result<ReadOnlyPool> map_read_only(int fd, const ParticipantView& node, const std::string& what) {
  // Every pool is sealed against shrinking at creation: a mapping of it
  // cannot fault. One that is not is not read.
  const int seals = ::fcntl(fd, F_GET_SEALS);
  struct stat st {};
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0 || ::fstat(fd, &st) != 0 ||
      st.st_size < static_cast<off_t>(sizeof(PoolSegment))) {
    ::close(fd);
    return Error(ErrorCode::kIncompatible, fmt::format("{} is not a sealed pool of this axon build", what));
  }
  const auto bytes = static_cast<std::size_t>(st.st_size);
  void* base = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    return system_error(err, fmt::format("mmap of {}", what));
  }
  ReadOnlyPool pool;
  pool.mapping = MappedSegment(fd, static_cast<std::byte*>(base), bytes);
  const auto* segment = std::launder(reinterpret_cast<const PoolSegment*>(pool.mapping.base()));
  // Acquire pairs with the owner's release store of `ready`.
  if (segment->header.ready.load(std::memory_order_acquire) != 1) {
    return Error(ErrorCode::kIncompatible, fmt::format("{} is not initialized", what));
  }
  if (auto ok = shm::check_header(segment->header, shm::SegmentKind::kPool, shm::layout_abi_hash(), bytes, what); !ok) {
    return ok.error();
  }
  if (segment->owner_participant != node.slot || segment->owner_generation != node.generation) {
    return Error(ErrorCode::kIncompatible, fmt::format("{} handed out another participant's pool", what));
  }
  const std::uint32_t blocks = segment->publisher_block_count;
  const std::uint32_t connections = segment->connection_count;
  const std::uint32_t queue_slots = segment->queue_slot_count;
  pool.layout = PoolLayout::of(blocks, connections, queue_slots);
  if (!PoolLayout::counts_in_range(blocks, connections, queue_slots) || pool.layout.chunk_area_offset > bytes) {
    return Error(ErrorCode::kIncompatible, fmt::format("{} has corrupt table sizes", what));
  }
  pool.blocks = std::launder(reinterpret_cast<const PublisherBlock*>(pool.mapping.base() + pool.layout.blocks_offset));
  pool.connections =
      std::launder(reinterpret_cast<const Connection*>(pool.mapping.base() + pool.layout.connections_offset));
  // attach() only reads; the mapping is read-only, so nothing here can write.
  auto chunks =
      ChunkPool::attach(pool.mapping.base() + pool.layout.chunk_area_offset, bytes - pool.layout.chunk_area_offset);
  if (!chunks) {
    return chunks.error();
  }
  pool.chunks = *chunks;
  return pool;
}

const EndpointView* find_endpoint(const std::vector<EndpointView>& list, std::uint32_t slot, std::uint32_t generation) {
  const std::uint64_t id = (std::uint64_t{slot} << 32U) | generation;
  for (const EndpointView& e : list) {
    if (e.endpoint_id == id) {
      return &e;
    }
  }
  return nullptr;
}

/// Counts one class of `pool`, naming holders and publishers from `view`.
class ClassCounter {
 public:
  ClassCounter(const ReadOnlyPool& pool, const DomainView& view, std::int64_t now_ns)
      : pool_(pool), view_(view), now_ns_(now_ns) {}

  PoolClassView count(std::uint32_t class_index) {
    const shm::SizeClass& sc = pool_.chunks.size_class(class_index);
    PoolClassView out;
    out.payload_bytes = sc.payload_capacity;
    out.total_chunks = sc.chunk_count;
    holders_.clear();
    publishers_.clear();
    for (std::uint32_t k = 0; k < sc.chunk_count; ++k) {
      const ChunkHeader* chunk = pool_.chunks.chunk_by_index(sc.first_index + k);
      if (chunk != nullptr) {
        count_chunk(*chunk, out);
      }
    }
    for (auto& [id, holder] : holders_) {
      out.holders.push_back(std::move(holder));
    }
    for (auto& [block, share] : publishers_) {
      out.publishers.push_back(std::move(share));
    }
    return out;
  }

 private:
  void count_chunk(const ChunkHeader& chunk, PoolClassView& out) {
    // Acquire: a statistics read that sees the releases of the holders that
    // let go (as ChunkPool::free_chunks()). Relaxed for the rest: estimates.
    const std::uint64_t holders = chunk.holders.load(std::memory_order_acquire);
    const bool wide = ChunkPool::held_wide(&chunk, holders);
    const std::uint32_t mark = chunk.cached.load(std::memory_order_relaxed);
    const bool unused =
        holders == shm::kLoanBit && !wide && (mark == 1 || mark == shm::ChunkReservation::kReservedMark);
    if ((holders == 0 && !wide) || unused) {
      ++out.free_chunks;
      return;
    }
    shm::ConnectionSet connections;
    connections.words[0] = holders & shm::kConnectionBitsOfWord[0];
    for (std::uint32_t w = 1; w < shm::kHolderWords; ++w) {
      connections.words[w] = chunk.holder_word(w).load(std::memory_order_relaxed);
    }
    const std::int64_t published_ns = chunk.publish_time_ns.load(std::memory_order_relaxed);
    const bool published = connections.any() || (holders & (shm::kHistoryBit | shm::kNetworkBit)) != 0;
    const std::int64_t age_ns = published && published_ns > 0 ? std::max<std::int64_t>(0, now_ns_ - published_ns) : -1;
    if (!published) {
      ++out.loaned;
    }
    out.in_history += (holders & shm::kHistoryBit) != 0 ? 1 : 0;
    out.on_network += (holders & shm::kNetworkBit) != 0 ? 1 : 0;
    out.by_subscribers += connections.any() ? 1 : 0;
    out.oldest_in_use_age_ns = std::max(out.oldest_in_use_age_ns, age_ns);
    const std::uint32_t block = chunk.publisher_block.load(std::memory_order_relaxed);
    if (block >= pool_.layout.publisher_blocks) {
      return;  // another process wrote it: not an index unchecked
    }
    count_publisher(block);
    for (std::uint32_t w = 0; w < shm::kHolderWords; ++w) {
      for (std::uint64_t bits = connections.words[w]; bits != 0; bits &= bits - 1) {
        const std::uint32_t bit = shm::connection_bit(w, static_cast<std::uint32_t>(__builtin_ctzll(bits)));
        count_holder(block, bit, age_ns);
      }
    }
  }

  void count_publisher(std::uint32_t block) {
    auto [it, added] = publishers_.try_emplace(block);
    if (added) {
      const PublisherBlock& b = pool_.blocks[block];
      const EndpointView* e = find_endpoint(view_.publishers, b.publisher_slot, b.publisher_generation);
      const TopicView* t = e != nullptr ? view_.topic(e->topic_slot) : nullptr;
      it->second.publisher_id = e != nullptr ? e->endpoint_id : 0;
      it->second.topic = t != nullptr ? t->name : "?";
    }
    ++it->second.chunks;
  }

  void count_holder(std::uint32_t block, std::uint32_t bit, std::int64_t age_ns) {
    if (bit >= shm::kMaxSubscribersPerPublisher) {
      return;
    }
    const std::uint16_t index = pool_.blocks[block].connection_of_bit[bit].load(std::memory_order_relaxed);
    if (index == shm::kNoConnection || index >= pool_.layout.connections) {
      return;
    }
    const Connection& c = pool_.connections[index];
    const std::uint64_t key = (std::uint64_t{c.subscriber_slot} << 32U) | c.subscriber_generation;
    auto [it, added] = holders_.try_emplace(key);
    PoolHolderView& h = it->second;
    if (added) {
      const EndpointView* e = find_endpoint(view_.subscribers, c.subscriber_slot, c.subscriber_generation);
      const ParticipantView* p = e != nullptr ? view_.participant(e->participant_slot) : nullptr;
      const TopicView* t = e != nullptr ? view_.topic(e->topic_slot) : nullptr;
      h.subscriber_id = e != nullptr ? e->endpoint_id : 0;
      h.node = p != nullptr ? p->name : "?";
      h.pid = p != nullptr ? p->pid : 0;
      h.topic = t != nullptr ? t->name : "?";
    }
    ++h.chunks;
    h.oldest_age_ns = std::max(h.oldest_age_ns, age_ns);
  }

  const ReadOnlyPool& pool_;
  const DomainView& view_;
  std::int64_t now_ns_;
  std::map<std::uint64_t, PoolHolderView> holders_;
  std::map<std::uint32_t, PoolPublisherShare> publishers_;
};

/// The socket of `node`, where it hands out its pool.
std::string socket_of(const shm::DomainFiles& files, const ParticipantView& node) {
  return fmt::format("{}/axon_d{}_p{}_g{}.sock", files.address.shm_dir, files.address.domain_id, node.slot,
                     node.generation);
}

/// `node`'s pool, mapped read-only, or why not.
Result<ReadOnlyPool> open_pool(const shm::DomainFiles& files, const ParticipantView& node, std::int64_t patience_ns) {
  if (!node.alive) {
    return Error(ErrorCode::kClosed, "its process is gone (not reclaimed yet)");
  }
  auto fd = ask_pool_fd(socket_of(files, node), patience_ns);
  if (!fd) {
    return fd.error();
  }
  return map_read_only(*fd, node, fmt::format("the pool of node '{}' (pid {})", node.name, node.pid));
}

/// The queues of publisher block `block` of `pool` (its publisher is `publisher`).
void add_connections(const ReadOnlyPool& pool, std::uint32_t block, const EndpointView& publisher,
                     std::vector<ConnectionView>& out) {
  const PublisherBlock& b = pool.blocks[block];
  // Acquire pairs with the creator's release of a connection's bit: its
  // entry (connection_of_bit, the connection's fields) is written.
  const shm::ConnectionSet active = shm::load_connections(b.active_bits, std::memory_order_acquire);
  for (std::uint32_t w = 0; w < shm::kHolderWords; ++w) {
    for (std::uint64_t bits = active.words[w]; bits != 0; bits &= bits - 1) {
      const std::uint32_t bit = shm::connection_bit(w, static_cast<std::uint32_t>(__builtin_ctzll(bits)));
      const std::uint16_t index = bit < shm::kMaxSubscribersPerPublisher
                                      ? b.connection_of_bit[bit].load(std::memory_order_relaxed)
                                      : shm::kNoConnection;
      if (index == shm::kNoConnection || index >= pool.layout.connections) {
        continue;  // another process wrote it: never an index unchecked
      }
      const Connection& c = pool.connections[index];
      // Relaxed: statistics, each exact for its moment.
      out.push_back(ConnectionView{
          .topic_slot = publisher.topic_slot,
          .publisher_id = publisher.endpoint_id,
          .subscriber_id = (std::uint64_t{c.subscriber_slot} << 32U) | c.subscriber_generation,
          .delivered = c.delivered.load(std::memory_order_relaxed),
          .dropped_full = c.dropped_full.load(std::memory_order_relaxed),
          .dropped_oldest = c.dropped_oldest.load(std::memory_order_relaxed),
          .dropped_timeout = c.dropped_timeout.load(std::memory_order_relaxed),
          .quarantines = c.quarantines.load(std::memory_order_relaxed),
          .rejected = c.rejected.load(std::memory_order_relaxed),
          .high_water = c.high_water.load(std::memory_order_relaxed),
          .queued = static_cast<std::uint32_t>(c.ring.observed_fill()),
          .depth = c.ring.limit(),
          .quarantined = c.quarantined.load(std::memory_order_relaxed) != 0,
      });
    }
  }
}

NodePoolView read_one(const shm::DomainFiles& files, const DomainView& view, const ParticipantView& node,
                      std::int64_t patience_ns) {
  NodePoolView out{.node = node, .unreadable = {}, .pool_bytes = node.pool_bytes, .classes = {}};
  auto pool = open_pool(files, node, patience_ns);
  if (!pool) {
    out.unreadable = std::string(pool.error().message());
    return out;
  }
  ClassCounter counter(*pool, view, monotonic_now_ns());
  for (std::uint32_t i = 0; i < pool->chunks.class_count(); ++i) {
    out.classes.push_back(counter.count(i));
  }
  return out;
}

}  // namespace

Result<std::vector<NodePoolView>> read_pool_views(const DomainAddress& address, const std::string& node,
                                                  std::int64_t patience_ns) {
  auto view = read_domain_view(address);
  if (!view) {
    return view.error();
  }
  const shm::DomainFiles files(address);
  std::vector<NodePoolView> pools;
  for (const ParticipantView& p : view->participants) {
    if (node.empty() || p.name == node) {
      pools.push_back(read_one(files, *view, p, patience_ns));
    }
  }
  return pools;
}

Result<TopicConnections> read_topic_connections(const DomainAddress& address, const DomainView& view,
                                                const std::string& topic, std::int64_t patience_ns) {
  const shm::DomainFiles files(address);
  TopicConnections out;
  const TopicView* t = nullptr;
  for (const TopicView& candidate : view.topics) {
    t = candidate.name == topic ? &candidate : t;
  }
  if (t == nullptr && !topic.empty()) {
    return out;
  }
  const auto wanted = [t](std::uint32_t topic_slot) { return t == nullptr || topic_slot == t->slot; };
  for (const ParticipantView& node : view.participants) {
    const bool publishes = std::any_of(view.publishers.begin(), view.publishers.end(), [&](const EndpointView& e) {
      return e.participant_slot == node.slot && wanted(e.topic_slot);
    });
    if (!publishes) {
      continue;
    }
    auto pool = open_pool(files, node, patience_ns);
    if (!pool) {
      out.unreadable.push_back(fmt::format("node '{}' (pid {}): {}", node.name, node.pid, pool.error().message()));
      continue;
    }
    for (std::uint32_t b = 0; b < pool->layout.publisher_blocks; ++b) {
      const PublisherBlock& block = pool->blocks[b];
      // Acquire pairs with the release that made the block active: its
      // fields are written.
      if (block.state.load(std::memory_order_acquire) != shm::BlockState::kActive) {
        continue;
      }
      const EndpointView* e = find_endpoint(view.publishers, block.publisher_slot, block.publisher_generation);
      if (e != nullptr && wanted(e->topic_slot)) {
        add_connections(*pool, b, *e, out.connections);
      }
    }
  }
  return out;
}

}  // namespace axon
