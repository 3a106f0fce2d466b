#include "transports/shm/shm_transport.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <optional>
#include <random>

#include "src/clock.hpp"
#include "src/errors.hpp"
#include "src/log.hpp"
#include "transports/shm/abi_hash.hpp"
#include "transports/shm/endpoint_limits.hpp"
#include "transports/shm/memory_options.hpp"
#include "transports/shm/process_identity.hpp"
#include "transports/shm/shared_checks.hpp"
#include "transports/shm/shm_ports.hpp"

namespace axon::shm {
namespace {

/// subscribe() waits this long (outside the domain lock) for the pools of
/// live publishers being fetched, so that it normally returns connected to
/// all of them; a stopped peer delays it by no more.
constexpr std::int64_t kSubscribeWaitNs = 20'000'000;

/// Pools owned by nodes of this process, so that another node of the same
/// process uses the owner's mapping instead of mapping the memfd again (one
/// address per chunk keeps ThreadSanitizer's view exact and saves a mapping).
struct LocalPools {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<MappedPool>> pools;

  static LocalPools& instance() {
    static LocalPools local;
    return local;
  }
  static std::string key(const ShmConfig& config, std::uint64_t incarnation, std::uint32_t slot,
                         std::uint32_t generation) {
    return fmt::format("{}/{}/{:x}/{}/{}", config.shm_dir, config.domain_id, incarnation, slot, generation);
  }
};

}  // namespace

ShmTransport::ShmTransport(ShmConfig config)
    : config_(std::move(config)),
      lock_(fmt::format("{}/axon_d{}.lock", config_.shm_dir, config_.domain_id), config_.file_mode) {}

Result<std::shared_ptr<ShmTransport>> ShmTransport::create(ShmConfig config) {
  if (config.chunk_classes.empty()) {
    config.chunk_classes = default_chunk_classes();
  }
  std::shared_ptr<ShmTransport> transport(new ShmTransport(std::move(config)));
  if (auto joined = transport->join(); !joined) {
    return joined.error();
  }
  return transport;
}

std::string ShmTransport::registry_path() const {
  return fmt::format("{}/axon_d{}_registry", config_.shm_dir, config_.domain_id);
}

std::string ShmTransport::socket_path(std::uint32_t slot, std::uint32_t generation) const {
  return fmt::format("{}/axon_d{}_p{}_g{}.sock", config_.shm_dir, config_.domain_id, slot, generation);
}

Result<void> ShmTransport::join() {
  if (!config_.group.empty()) {
    struct group* g = ::getgrnam(config_.group.c_str());  // NOLINT(concurrency-mt-unsafe): start-up only
    if (g == nullptr) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("group '{}' does not exist; create it or fix NodeOptions::group", config_.group));
    }
    group_gid_ = g->gr_gid;
  }
  if (auto locked = lock_.lock(); !locked) {
    return locked.error();
  }
  DomainLockGuard guard(lock_);
  if (auto reg = open_or_create_registry(); !reg) {
    return reg.error();
  }
  // Held for the node's life (the kernel drops it at any death, even
  // SIGKILL): a joiner that finds the registry damaged replaces it only when
  // nobody holds it. Never contended here: the only exclusive taker holds
  // the domain lock, as we do.
  if (::flock(registry_mapping_.fd(), LOCK_SH | LOCK_NB) != 0) {
    return system_error(errno, fmt::format("flock(LOCK_SH) of {}", registry_path()));
  }
  joined_incarnation_ = registry_segment_->incarnation;
  auto pool_bytes = ChunkPool::bytes_needed(config_.chunk_classes);
  if (!pool_bytes) {
    return pool_bytes.error();
  }
  auto self = registry_.add_participant(self_identity(), config_.node_name, pool_area_offset() + *pool_bytes);
  if (!self) {
    return self.error();
  }
  self_ = *self;
  auto fail = [this](Error error) -> Result<void> {
    registry_.remove_participant(self_.slot);
    return error;
  };
  if (auto pool = create_own_pool(); !pool) {
    return fail(pool.error());
  }
  auto server = FdServer::listen(socket_path(self_.slot, self_.generation), config_.file_mode, own_pool_->mapping.fd(),
                                 group_gid_);
  if (!server) {
    return fail(server.error());
  }
  fd_server_ = std::move(*server);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    return fail(system_error(errno, "eventfd"));
  }
  service_ = std::thread([this] { service_loop(); });
  logger().debug("node '{}' joined domain {} as participant {}", config_.node_name, config_.domain_id, self_.slot);
  return {};
}

Result<void> ShmTransport::open_or_create_registry() {
  const std::string path = registry_path();
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) {
      return system_error(errno, fmt::format("open {}", path));
    }
    remove_stale_files();
    return create_registry();
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return system_error(err, fmt::format("fstat of {}", path));
  }
  const auto file_bytes = static_cast<std::size_t>(st.st_size);
  if (file_bytes != sizeof(RegistrySegment)) {
    // Read, not mapped: a file shorter than its header cannot fault here.
    SegmentHeader header;
    // Another build's registry (of another size), or a file that is not
    // axon's at all (neither our magic nor zeros): never ours to replace.
    if (file_bytes >= sizeof(SegmentHeader) && ::pread(fd, &header, sizeof(header), 0) == sizeof(header) &&
        (header.magic == kSegmentMagic ? header.layout_version != kLayoutVersion || header.abi_hash != layout_abi_hash()
                                       : header.magic != 0)) {
      ::close(fd);
      return check_header(header, SegmentKind::kRegistry, layout_abi_hash(), file_bytes, path).error();
    }
    auto replaced = replace_if_abandoned(
        fd, fmt::format("it has {} bytes, a registry of this build has {}: it was truncated or overwritten", file_bytes,
                        sizeof(RegistrySegment)));
    ::close(fd);
    return replaced;
  }
  void* base = ::mmap(nullptr, file_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    return system_error(err, fmt::format("mmap of {}", path));
  }
  if (auto adopted = adopt_registry(MappedSegment(fd, static_cast<std::byte*>(base), file_bytes)); !adopted) {
    return adopted.error();
  }
  const SegmentHeader& header = registry_segment_->header;
  auto forget = [this] {
    registry_ = Registry(nullptr);
    registry_segment_ = nullptr;
    registry_guard_ = GuardedMapping();
    registry_mapping_ = MappedSegment();
  };
  if (header.magic != kSegmentMagic) {
    if (header.magic != 0) {  // not axon's: never delete what we cannot identify
      auto error = check_header(header, SegmentKind::kRegistry, layout_abi_hash(), file_bytes, path).error();
      forget();
      return error;
    }
    // Zeroed: truncated and grown again (by a node's SIGBUS guard).
    auto replaced = replace_if_abandoned(registry_mapping_.fd(), "its header is zero: it was truncated while mapped");
    if (!replaced) {
      forget();
      return replaced.error();
    }
    return {};
  }
  // We hold the domain lock and creators initialize under it: a registry
  // that is not ready was left by a creator that died half-way.
  // Acquire pairs with the release store of `ready` by the creator.
  const bool ready = header.ready.load(std::memory_order_acquire) == 1;
  if (ready) {
    if (auto ok = check_header(header, SegmentKind::kRegistry, layout_abi_hash(), file_bytes, path); !ok) {
      forget();
      return ok.error();
    }
    for (const std::uint32_t dead : registry_.dead_participants()) {
      reclaim_dead(dead);
    }
    if (registry_.active_participants() > 0) {
      return {};
    }
  }
  // Every owner is gone: what is here is stale. Start the domain afresh.
  logger().info("removing stale axon domain {} files left by dead processes in {}", config_.domain_id, config_.shm_dir);
  forget();
  ::unlink(path.c_str());
  remove_stale_files();
  return create_registry();
}

Result<void> ShmTransport::adopt_registry(MappedSegment mapping) {
  // Guarded before anything reads it: a truncation from now on is survived.
  auto guarded = GuardedMapping::guard(mapping.base(), mapping.bytes(), mapping.fd());
  if (!guarded) {
    return guarded.error();
  }
  registry_guard_ = std::move(*guarded);  // first: the old guard goes before its mapping
  registry_mapping_ = std::move(mapping);
  registry_segment_ = std::launder(reinterpret_cast<RegistrySegment*>(registry_mapping_.base()));
  registry_ = Registry(registry_segment_);
  return {};
}

Result<void> ShmTransport::replace_if_abandoned(int fd, const std::string& what) {
  const std::string path = registry_path();
  // Every participant holds LOCK_SH on the registry for its life: getting
  // LOCK_EX means nobody alive uses this file. (The lock goes with `fd`.)
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    return Error(ErrorCode::kIncompatible,
                 fmt::format("the registry {} of domain {} is damaged ({}), and processes of the domain still use "
                             "it: stop every axon process of domain {} (they keep running but no node can join), then "
                             "start them again; the first node then replaces the file. Remove {} by hand only when "
                             "no process of the domain runs",
                             path, config_.domain_id, what, config_.domain_id, path));
  }
  logger().warn("replacing the damaged registry {} of domain {} ({}); no process uses it any more", path,
                config_.domain_id, what);
  ::unlink(path.c_str());
  remove_stale_files();
  return create_registry();
}

bool ShmTransport::registry_intact_locked() noexcept {
  if (registry_damaged_) {
    return false;
  }
  std::string what;
  struct stat st {};
  if (registry_guard_.repairs() != 0) {
    what = "it was truncated while mapped (this process grew it back on a fault; its tables are lost)";
  } else if (::fstat(registry_mapping_.fd(), &st) != 0 ||
             static_cast<std::size_t>(st.st_size) != sizeof(RegistrySegment)) {
    what = fmt::format("it was truncated to {} bytes (a registry has {})", st.st_size, sizeof(RegistrySegment));
  } else if (registry_segment_->header.magic != kSegmentMagic ||
             // Acquire pairs with the creator's release store of `ready`.
             registry_segment_->header.ready.load(std::memory_order_acquire) != 1 ||
             registry_segment_->incarnation != joined_incarnation_) {
    what = "its header was overwritten";
  } else {
    return true;
  }
  registry_damaged_ = true;
  try {
    logger().error(
        "the registry {} of domain {} was damaged while node '{}' ran: {}. The node keeps its connections "
        "and its data flows, but it sees no new publishers or subscribers and no node can join the domain: "
        "restart the processes of domain {} (and keep cleanup scripts away from {}/axon_d* while axon runs)",
        registry_path(), config_.domain_id, config_.node_name, what, config_.domain_id, config_.shm_dir);
  } catch (...) {  // NOLINT(bugprone-empty-catch): logging must not take the node down
  }
  return false;
}

Error ShmTransport::damaged_registry_error(std::string_view topic) const {
  return {ErrorCode::kIncompatible,
          fmt::format("topic '{}': the registry {} of domain {} was damaged (truncated or overwritten) while node "
                      "'{}' ran, so no endpoint can be added; restart the processes of domain {}",
                      topic, registry_path(), config_.domain_id, config_.node_name, config_.domain_id)};
}

void ShmTransport::remove_stale_files() const {
  DIR* dir = ::opendir(config_.shm_dir.c_str());
  if (dir == nullptr) {
    return;
  }
  const std::string prefix = fmt::format("axon_d{}_p", config_.domain_id);
  while (const dirent* entry = ::readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): own DIR stream
    const std::string_view name = entry->d_name;
    if (name.starts_with(prefix) && name.ends_with(".sock")) {
      ::unlink(fmt::format("{}/{}", config_.shm_dir, name).c_str());
    }
  }
  ::closedir(dir);
}

Result<void> ShmTransport::create_registry() {
  auto created = create_named_segment(registry_path(), sizeof(RegistrySegment), config_.file_mode, config_.group);
  if (!created) {
    return created.error();
  }
  if (auto adopted = adopt_registry(std::move(*created)); !adopted) {
    ::unlink(registry_path().c_str());
    return adopted.error();
  }
  init_header(registry_segment_->header, SegmentKind::kRegistry, layout_abi_hash(), sizeof(RegistrySegment));
  Registry::format(registry_segment_);
  std::random_device entropy;
  registry_segment_->incarnation =
      (std::uint64_t{entropy()} << 32) ^ entropy() ^ static_cast<std::uint64_t>(monotonic_now_ns());
  registry_ = Registry(registry_segment_);
  // Release pairs with the acquire in open_or_create_registry().
  registry_segment_->header.ready.store(1, std::memory_order_release);
  return {};
}

Result<void> ShmTransport::create_own_pool() {
  auto chunk_bytes = ChunkPool::bytes_needed(config_.chunk_classes);
  if (!chunk_bytes) {
    return chunk_bytes.error();
  }
  std::size_t bytes = pool_area_offset() + *chunk_bytes;
  if (config_.huge_pages) {
    bytes = round_up_to_huge_pages(bytes);
  }
  auto mapping = create_memfd_segment(fmt::format("axon_pool_d{}_{}", config_.domain_id, config_.node_name), bytes,
                                      config_.huge_pages);
  if (!mapping) {
    return mapping.error();
  }
  const MemoryOptions memory{.prefault = config_.prefault_memory, .lock = config_.lock_memory};
  if (auto ok = apply_memory_options(memory, mapping->base(), bytes, "the chunk pool"); !ok) {
    return ok.error();
  }
  auto pool = std::make_shared<MappedPool>();
  pool->mapping = std::move(*mapping);
  auto* segment = new (pool->mapping.base()) PoolSegment();
  init_header(segment->header, SegmentKind::kPool, layout_abi_hash(), bytes);
  segment->owner_participant = self_.slot;
  segment->owner_generation = self_.generation;
  for (auto& block : segment->blocks) {
    for (auto& bit : block.connection_of_bit) {
      bit.store(kNoConnection, std::memory_order_relaxed);  // published by `ready`
    }
  }
  pool->segment = segment;
  pool->pool = ChunkPool::format(pool->mapping.base() + pool_area_offset(), config_.chunk_classes);
  pool->owner = self_;
  pool->owner_is_local = true;
  // Release: peers that map the pool check `ready` with acquire.
  segment->header.ready.store(1, std::memory_order_release);
  own_pool_ = std::move(pool);
  LocalPools& local = LocalPools::instance();
  std::lock_guard<std::mutex> local_guard(local.mutex);
  std::erase_if(local.pools, [](const auto& entry) { return entry.second.expired(); });
  local.pools[LocalPools::key(config_, registry_segment_->incarnation, self_.slot, self_.generation)] = own_pool_;
  return {};
}

ShmTransport::~ShmTransport() { leave(); }

void ShmTransport::leave() noexcept {
  if (service_.joinable()) {
    stopping_.store(true, std::memory_order_relaxed);  // the eventfd write wakes the thread
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof(one));
    service_.join();
  }
  if (wake_fd_ >= 0) {
    ::close(wake_fd_);
  }
  if (registry_segment_ == nullptr || !lock_.lock()) {
    return;
  }
  DomainLockGuard guard(lock_);
  if (!registry_intact_locked()) {
    // Its tables are lost, and other nodes may still run on it: remove the
    // file only when no other participant holds it (see join()).
    fd_server_.close();
    ::flock(registry_mapping_.fd(), LOCK_UN);
    if (::flock(registry_mapping_.fd(), LOCK_EX | LOCK_NB) == 0) {
      ::unlink(registry_path().c_str());
      remove_stale_files();
      lock_.unlink_while_locked();
    }
    return;
  }
  if (registry_.participant_is(self_)) {
    registry_.remove_participant(self_.slot);
  }
  fd_server_.close();
  for (const std::uint32_t dead : registry_.dead_participants()) {
    reclaim_dead(dead);
  }
  if (registry_.active_participants() == 0) {
    // Last one out: nothing of the domain stays in the shm directory.
    ::unlink(registry_path().c_str());
    lock_.unlink_while_locked();
  }
  logger().debug("node '{}' left domain {}", config_.node_name, config_.domain_id);
}

void ShmTransport::service_loop() noexcept {
  std::int64_t next_check = 0;
  std::vector<int> fds;
  std::vector<pollfd> polled;
  std::vector<Deposit> received;
  while (!stopping_.load(std::memory_order_relaxed)) {
    const std::int64_t now = monotonic_now_ns();
    const std::int64_t wake_at = std::min({next_check, fd_server_.next_deadline_ns(), fetcher_.next_deadline_ns()});
    int timeout_ms = wake_at > now ? static_cast<int>((wake_at - now) / 1'000'000) + 1 : 0;
    // Transient-local publishers: late joiners get the history within a few
    // milliseconds even when the publisher is idle.
    if (durable_count_.load(std::memory_order_relaxed) != 0) {
      timeout_ms = std::min(timeout_ms, kAdoptPeriodMs);
    }
    // Our eventfd, the listening socket, clients that have not sent their
    // request yet, and our own requests waiting for an answer: one silent
    // peer never keeps this thread from the others.
    fds.assign(1, wake_fd_);
    fd_server_.poll_fds(fds);
    fetcher_.poll_fds(fds);
    polled.clear();
    for (const int fd : fds) {
      polled.push_back({.fd = fd, .events = POLLIN, .revents = 0});
    }
    if (::poll(polled.data(), polled.size(), timeout_ms) > 0 && (polled[0].revents & POLLIN) != 0) {
      std::uint64_t count = 0;
      [[maybe_unused]] const auto n = ::read(wake_fd_, &count, sizeof(count));
    }
    const std::int64_t served_at = monotonic_now_ns();
    received.clear();
    fd_server_.serve(served_at, received);
    for (const Deposit& deposit : received) {
      adopt_pool(deposit, served_at, "deposited");
    }
    received.clear();
    const bool ended = fetcher_.run(served_at, received);
    for (const Deposit& fetched : received) {
      if (!adopt_pool(fetched, served_at, "fetched")) {
        // E.g. lock_memory over RLIMIT_MEMLOCK: try again later, not in a loop.
        const SlotRef owner{fetched.participant, fetched.generation};
        fetcher_.want(owner, socket_path(owner.slot, owner.generation), served_at + PoolFetcher::kMaxBackoffNs);
      }
    }
    if (ended && received.empty()) {
      std::lock_guard<std::mutex> fetch_guard(fetch_mutex_);
      ++fetch_events_;  // a fetch failed: subscribe() stops waiting for it
      fetch_cv_.notify_all();
    }
    if (monotonic_now_ns() >= next_check) {
      // Never block here: a peer may hold the lock (see check_liveness_now()).
      if (lock_.try_lock()) {
        liveness_round();
        prune_peer_pools(monotonic_now_ns());
        lock_.unlock();
      }
      next_check = monotonic_now_ns() + std::int64_t{config_.liveness_period_ms} * 1'000'000;
    }
    adopt_joiners();
  }
}

void ShmTransport::adopt_joiners() noexcept {
  if (durable_count_.load(std::memory_order_relaxed) == 0) {
    return;
  }
  std::lock_guard<std::mutex> durable_guard(durable_mutex_);
  for (ShmPublisherPort* port : durable_publishers_) {
    port->adopt_joiners_if_idle();
  }
}

void ShmTransport::forget_durable(ShmPublisherPort* port) noexcept {
  std::lock_guard<std::mutex> durable_guard(durable_mutex_);
  std::erase(durable_publishers_, port);
  durable_count_.store(static_cast<std::uint32_t>(durable_publishers_.size()), std::memory_order_relaxed);
}

void ShmTransport::check_liveness_now() {
  // Never block here: the service thread also serves descriptors and takes
  // deposits, which must not wait behind whoever holds the lock.
  if (!lock_.try_lock()) {
    return;
  }
  liveness_round();
  lock_.unlock();
}

void ShmTransport::liveness_round() noexcept {
  // A damaged registry looks empty: trusting it would close every
  // connection and silently stop the data. Our own pool is still ours.
  if (registry_intact_locked()) {
    for (const std::uint32_t dead : registry_.dead_participants()) {
      reclaim_dead(dead);
    }
    close_connections_of_gone_subscribers();
  }
  reclaim_closing_of_idle_publishers();
  reclaim_retired_blocks();
}

void ShmTransport::reclaim_dead(std::uint32_t participant) noexcept {
  const ParticipantEntry& p = registry_.participant(participant);
  // strnlen: the name was written by another process.
  logger().warn("participant '{}' (pid {}) of domain {} is gone; reclaiming what it held",
                std::string_view(p.name, ::strnlen(p.name, sizeof(p.name))), p.pid, config_.domain_id);
  ::unlink(socket_path(participant, p.generation).c_str());
  registry_.remove_participant(participant);
}

void ShmTransport::close_connections_of_gone_subscribers() noexcept {
  PoolSegment* segment = own_pool_->segment;
  for (auto& conn : segment->connections) {
    // Acquire: the fields of an active connection were written before it.
    if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
      continue;
    }
    // A subscriber's process wrote the connection: a slot out of range names
    // no subscriber, so the connection is closed like one of a gone subscriber.
    const bool corrupt = conn.subscriber_slot >= kMaxSubscribers;
    if (corrupt) {
      report_corruption(
          Corruption::kConnection,
          fmt::format("connection {} of node '{}' names subscriber slot {} (at most {}); closing it",
                      &conn - segment->connections, config_.node_name, conn.subscriber_slot, kMaxSubscribers));
    }
    if (corrupt || !registry_.subscriber_is({conn.subscriber_slot, conn.subscriber_generation})) {
      auto expected = ConnectionState::kActive;
      // Release pairs with the acquire in the publisher's publish(): it will
      // reclaim the connection. Fails harmlessly if the subscriber closed it.
      conn.state.compare_exchange_strong(expected, ConnectionState::kClosing, std::memory_order_release,
                                         std::memory_order_relaxed);
    }
  }
}

void ShmTransport::reclaim_retired_blocks() noexcept {
  PoolSegment* segment = own_pool_->segment;
  for (std::uint32_t b = 0; b < kMaxPublishersPerNode; ++b) {
    PublisherBlock& block = segment->blocks[b];
    // Acquire pairs with the publisher's release store of kRetired: its last
    // pushes are done, so this thread may reclaim.
    if (block.state.load(std::memory_order_acquire) != BlockState::kRetired) {
      continue;
    }
    // A publisher destroyed while the domain lock could not be taken left its
    // registry entry behind: remove it (we hold the lock) before the block
    // may be reused, so subscribers let go of it.
    if (block.publisher_slot < kMaxPublishers) {
      const EndpointEntry& pub = registry_.publisher(block.publisher_slot);
      if (pub.state == EntryState::kActive && pub.generation == block.publisher_generation &&
          pub.participant == self_.slot && pub.pool_block == b) {
        registry_.remove_publisher(block.publisher_slot);
      }
    }
    reclaim_closing_connections(*own_pool_, b);
    if (block.allocated_bits.load(std::memory_order_relaxed) == 0) {
      block.state.store(BlockState::kFree, std::memory_order_relaxed);  // reused under the domain lock only
    }
  }
}

namespace {

/// Whether `block` has a connection in state kClosing (its reclaimer's view).
bool has_closing_connection(const PoolSegment& segment, const PublisherBlock& block) noexcept {
  // Acquire pairs with the creator's release in create_connection().
  for (std::uint64_t bits = block.allocated_bits.load(std::memory_order_acquire) & kConnectionBits; bits != 0;
       bits &= bits - 1) {
    const std::uint16_t index =
        block.connection_of_bit[__builtin_ctzll(bits)].load(std::memory_order_relaxed);  // written before the bit
    // Acquire pairs with the release that moved the connection to kClosing.
    if (index < kMaxConnectionsPerNode &&
        segment.connections[index].state.load(std::memory_order_acquire) == ConnectionState::kClosing) {
      return true;
    }
  }
  return false;
}

}  // namespace

void ShmTransport::reclaim_closing_of_idle_publishers() noexcept {
  PoolSegment* segment = own_pool_->segment;
  for (std::uint32_t b = 0; b < kMaxPublishersPerNode; ++b) {
    PublisherBlock& block = segment->blocks[b];
    // Acquire pairs with advertise()'s release store of kActive. Retired
    // blocks are reclaimed by reclaim_retired_blocks() without the flag.
    if (block.state.load(std::memory_order_acquire) != BlockState::kActive ||
        !has_closing_connection(*segment, block)) {
      continue;
    }
    SpinFlag& busy = block_busy_[b].flag;
    // try_lock() acquires, pairing with the publisher's unlock() (release):
    // its pushes and reclaims are over. A busy publisher reclaims itself when
    // it meets the closing connection, or we try again next round.
    if (!busy.try_lock()) {
      continue;
    }
    // Relaxed: a statistic read by the publisher's counters().
    block_busy_[b].rejected_reclaimed.fetch_add(reclaim_closing_connections(*own_pool_, b), std::memory_order_relaxed);
    busy.unlock();  // release: pairs with the acquire of the publisher's next lock()
  }
}

std::uint64_t reclaim_connection(MappedPool& pool, std::uint32_t block_index, std::uint32_t bit) noexcept {
  PublisherBlock& block = pool.segment->blocks[block_index];
  const std::uint64_t mask = std::uint64_t{1} << bit;
  // Relaxed: the caller is the only thread that pushes to this block.
  block.active_bits.fetch_and(~mask, std::memory_order_relaxed);
  block.joining_bits.fetch_and(~mask, std::memory_order_relaxed);
  // Give back every chunk the connection holds (queued or taken). A chunk of
  // this block that has our bit cannot be freed or loaned again until we
  // clear it, and only the caller loans for this block, so reading the bit
  // first (acquire, pairing with the release fetch_or in publish()) and the
  // block second identifies our chunks without races.
  ChunkPool& chunks = pool.pool;
  for (std::uint32_t i = 0; i < chunks.total_chunks(); ++i) {
    ChunkHeader* chunk = chunks.chunk_by_index(i);
    if ((chunk->holders.load(std::memory_order_acquire) & mask) == 0) {
      continue;
    }
    if (chunk->publisher_block.load(std::memory_order_relaxed) != block_index) {
      continue;
    }
    chunks.drop_holders(chunk, mask);
  }
  const std::uint16_t index = block.connection_of_bit[bit].load(std::memory_order_relaxed);
  // Relaxed: the subscriber's last store came before its release that moved
  // the connection to kClosing, which our caller acquired. A corrupt index
  // reads nothing.
  const std::uint64_t rejected =
      index < kMaxConnectionsPerNode ? pool.segment->connections[index].rejected.load(std::memory_order_relaxed) : 0;
  block.connection_of_bit[bit].store(kNoConnection, std::memory_order_relaxed);
  // The index was written by the connection's creator (maybe another
  // process): a corrupt one frees the bit but touches no connection.
  if (index < kMaxConnectionsPerNode) {
    // Release: creators that see kFree (acquire CAS) see the connection idle.
    pool.segment->connections[index].state.store(ConnectionState::kFree, std::memory_order_release);
  }
  // Release: the bit is reusable only after everything above.
  block.allocated_bits.fetch_and(~mask, std::memory_order_release);
  return rejected;
}

std::uint64_t reclaim_closing_connections(MappedPool& pool, std::uint32_t block_index) noexcept {
  PublisherBlock& block = pool.segment->blocks[block_index];
  std::uint64_t rejected = 0;
  // Acquire pairs with the creator's release in create_connection(); only the
  // caller clears bits, so the snapshot cannot lose one it must reclaim.
  // Bits above the connections' are never allocated; masked, a stray one
  // cannot index past connection_of_bit.
  std::uint64_t bits = block.allocated_bits.load(std::memory_order_acquire) & kConnectionBits;
  for (; bits != 0; bits &= bits - 1) {
    const auto bit = static_cast<std::uint32_t>(__builtin_ctzll(bits));
    const std::uint16_t index = block.connection_of_bit[bit].load(std::memory_order_relaxed);
    if (index != kNoConnection && index >= kMaxConnectionsPerNode) {
      report_corruption(Corruption::kConnectionIndex,
                        fmt::format("publisher block {} maps bit {} to connection {} (at most {}); freeing the bit",
                                    block_index, bit, index, kMaxConnectionsPerNode));
      reclaim_connection(pool, block_index, bit);
      continue;
    }
    // Acquire pairs with the release that moved the connection to kClosing.
    if (index != kNoConnection &&
        pool.segment->connections[index].state.load(std::memory_order_acquire) == ConnectionState::kClosing) {
      rejected += reclaim_connection(pool, block_index, bit);
    }
  }
  return rejected;
}

std::shared_ptr<MappedPool> ShmTransport::mapped_pool(SlotRef owner, bool fetch) {
  if (owner == self_) {
    return own_pool_;
  }
  {
    LocalPools& local = LocalPools::instance();
    std::lock_guard<std::mutex> local_guard(local.mutex);
    if (auto it =
            local.pools.find(LocalPools::key(config_, registry_segment_->incarnation, owner.slot, owner.generation));
        it != local.pools.end()) {
      if (auto pool = it->second.lock()) {
        return pool;
      }
    }
  }
  {
    std::lock_guard<std::mutex> peers_guard(peers_mutex_);
    if (auto it = peers_.find(pool_key(owner)); it != peers_.end()) {
      if (auto pool = it->second.lock()) {
        return pool;
      }
    }
  }
  if (fetch) {
    fetcher_.want(owner, socket_path(owner.slot, owner.generation));
    wake_service();
  }
  return nullptr;
}

Result<std::shared_ptr<MappedPool>> ShmTransport::map_peer_pool(SlotRef owner, int fd, const std::string& path) {
  const std::uint32_t participant = owner.slot;
  const std::uint32_t generation = owner.generation;
  auto mapping = map_received_segment(fd, fmt::format("pool of participant {}", participant));
  if (!mapping) {
    return mapping.error();
  }
  const auto* header = std::launder(reinterpret_cast<SegmentHeader*>(mapping->base()));
  if (header->ready.load(std::memory_order_acquire) != 1) {  // pairs with create_own_pool()
    return Error(ErrorCode::kIncompatible, fmt::format("the pool behind {} is not initialized", path));
  }
  if (auto ok = check_header(*header, SegmentKind::kPool, layout_abi_hash(), mapping->bytes(), path); !ok) {
    return ok.error();
  }
  // This node's options cover the peer pools it maps as well.
  const MemoryOptions memory{.prefault = config_.prefault_memory, .lock = config_.lock_memory};
  if (auto ok = apply_memory_options(memory, mapping->base(), mapping->bytes(),
                                     fmt::format("the pool of participant {}", participant));
      !ok) {
    return ok.error();
  }
  auto pool = std::make_shared<MappedPool>();
  pool->mapping = std::move(*mapping);
  pool->segment = std::launder(reinterpret_cast<PoolSegment*>(pool->mapping.base()));
  if (pool->segment->owner_participant != participant || pool->segment->owner_generation != generation) {
    return Error(ErrorCode::kIncompatible, fmt::format("{} handed out another participant's pool", path));
  }
  auto chunks =
      ChunkPool::attach(pool->mapping.base() + pool_area_offset(), pool->mapping.bytes() - pool_area_offset());
  if (!chunks) {
    return chunks.error();
  }
  pool->pool = *chunks;
  pool->owner = {participant, generation};
  return pool;
}

namespace {

/// The registry stores the subscriber's effective axon::Overflow (see
/// effective_queue(): kLatestOnly is kDropOldest of depth 1 by then).
OverflowPolicy policy_of(Overflow overflow) noexcept {
  switch (overflow) {
    case Overflow::kBlockPublisher: return OverflowPolicy::kBlockPublisher;
    case Overflow::kRejectNewest: return OverflowPolicy::kRejectNewest;
    default: return OverflowPolicy::kDropOldest;
  }
}

}  // namespace

Result<Connection*> ShmTransport::create_connection(MappedPool& pool, std::uint32_t block_index, SlotRef subscriber,
                                                    bool hand_over_history) {
  PublisherBlock& block = pool.segment->blocks[block_index];
  // Relaxed: bits are only set under the domain lock, which we hold.
  const std::uint64_t allocated = block.allocated_bits.load(std::memory_order_acquire);
  const std::uint64_t usable = (std::uint64_t{1} << kMaxSubscribersPerPublisher) - 1;
  if ((allocated & usable) == usable) {
    return Error(ErrorCode::kLimitReached,
                 fmt::format("a publisher has at most {} subscribers", kMaxSubscribersPerPublisher));
  }
  const auto bit = static_cast<std::uint32_t>(__builtin_ctzll(~allocated));
  for (std::uint32_t i = 0; i < kMaxConnectionsPerNode; ++i) {
    Connection& conn = pool.segment->connections[i];
    auto expected = ConnectionState::kFree;
    // Acquire pairs with the reclaimer's release store of kFree.
    if (!conn.state.compare_exchange_strong(expected, ConnectionState::kClaimed, std::memory_order_acquire,
                                            std::memory_order_relaxed)) {
      continue;
    }
    const EndpointEntry& sub = registry_.subscriber(subscriber.slot);
    // Another process wrote the entry; its depth and policy shape our ring.
    if (const std::string_view why = invalid_subscriber_entry(sub); !why.empty()) {
      conn.state.store(ConnectionState::kFree, std::memory_order_relaxed);  // never published
      return Error(ErrorCode::kIncompatible,
                   fmt::format("registry subscriber entry {} is corrupt ({}: depth {}, overflow {}); not connected. "
                               "Restart the processes of domain {}",
                               subscriber.slot, why, sub.depth, sub.overflow, config_.domain_id));
    }
    conn.block = block_index;
    conn.bit = bit;
    conn.subscriber_slot = subscriber.slot;
    conn.subscriber_generation = subscriber.generation;
    conn.overflow = policy_of(static_cast<Overflow>(sub.overflow));
    conn.reliable = sub.reliable;
    conn.block_timeout_ns = sub.block_timeout_ns;
    conn.quarantine_after_ns = sub.quarantine_after_ns;
    // Relaxed: published by the state store below.
    conn.delivered.store(0, std::memory_order_relaxed);
    conn.dropped_full.store(0, std::memory_order_relaxed);
    conn.dropped_oldest.store(0, std::memory_order_relaxed);
    conn.dropped_timeout.store(0, std::memory_order_relaxed);
    conn.quarantines.store(0, std::memory_order_relaxed);
    conn.high_water.store(0, std::memory_order_relaxed);
    conn.quarantined.store(0, std::memory_order_relaxed);
    conn.rejected.store(0, std::memory_order_relaxed);
    conn.full_since_ns = 0;
    conn.above_high_water = 0;
    conn.ring.reset(sub.depth);
    block.connection_of_bit[bit].store(static_cast<std::uint16_t>(i), std::memory_order_relaxed);
    block.allocated_bits.fetch_or(std::uint64_t{1} << bit, std::memory_order_relaxed);
    // Release pairs with the acquire loads of the state by publisher and subscriber.
    conn.state.store(ConnectionState::kActive, std::memory_order_release);
    // Release pairs with the publisher's acquire load of active_bits (or of
    // joining_bits): the connection and its bit's index are visible first.
    // A transient-local publisher's own process queues its history to the
    // connection first (the ring has one producer), then activates it.
    const bool joining = hand_over_history && block.history_depth > 0;
    (joining ? block.joining_bits : block.active_bits).fetch_or(std::uint64_t{1} << bit, std::memory_order_release);
    return &conn;
  }
  return Error(
      ErrorCode::kLimitReached,
      fmt::format("a node's pool has at most {} connections (publisher x subscriber pairs)", kMaxConnectionsPerNode));
}

Result<std::shared_ptr<PublisherPort>> ShmTransport::advertise(const TopicDescriptor& topic, const PublisherQos& qos) {
  if (qos.durability == Durability::kTransientLocal &&
      (qos.durability_depth == 0 || qos.durability_depth > kMaxDurabilityDepth)) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("topic '{}': PublisherQos::durability_depth is {}; a transient-local publisher keeps "
                             "1..{} messages",
                             topic.name, qos.durability_depth, kMaxDurabilityDepth));
  }
  if (qos.high_water_percent == 0 || qos.high_water_percent > 100) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("topic '{}': PublisherQos::high_water_percent is {}; it must be 1..100", topic.name,
                             qos.high_water_percent));
  }
  const std::uint64_t max_payload = qos.max_payload_bytes != 0 ? qos.max_payload_bytes : topic.max_payload_bytes;
  if (max_payload > own_pool_->pool.largest_payload()) {
    return Error(ErrorCode::kPayloadTooLarge,
                 fmt::format("topic '{}' needs {} B chunks, the largest chunk class of node '{}' holds {} B; "
                             "add a larger class to NodeOptions::chunk_classes",
                             topic.name, max_payload, config_.node_name, own_pool_->pool.largest_payload()));
  }
  if (auto locked = lock_.lock(); !locked) {
    return locked.error();
  }
  // Released before the deposits below: they address other processes.
  std::optional<DomainLockGuard> guard(std::in_place, lock_);
  if (!registry_intact_locked()) {
    return damaged_registry_error(topic.name);
  }
  auto topic_slot = registry_.find_or_add_topic(topic);
  if (!topic_slot) {
    return topic_slot.error();
  }
  // Refused now rather than accepted and never connected to some subscriber.
  if (auto room = check_advertise_limits(registry_, *topic_slot, topic.name, self_.slot, config_.node_name); !room) {
    return room.error();
  }
  PoolSegment* segment = own_pool_->segment;
  std::uint32_t block_index = kMaxPublishersPerNode;
  for (std::uint32_t b = 0; b < kMaxPublishersPerNode; ++b) {
    if (segment->blocks[b].state.load(std::memory_order_acquire) == BlockState::kFree) {
      block_index = b;
      break;
    }
  }
  if (block_index == kMaxPublishersPerNode) {
    return Error(ErrorCode::kLimitReached,
                 fmt::format("node '{}' already has {} publishers", config_.node_name, kMaxPublishersPerNode));
  }
  auto pub = registry_.add_publisher(*topic_slot, self_, block_index);
  if (!pub) {
    return pub.error();
  }
  PublisherBlock& block = segment->blocks[block_index];
  block.publisher_slot = pub->slot;
  block.publisher_generation = pub->generation;
  block.topic = *topic_slot;
  block.history_depth = qos.durability == Durability::kTransientLocal ? qos.durability_depth : 0;
  block.active_bits.store(0, std::memory_order_relaxed);  // the block is ours alone until kActive
  block.joining_bits.store(0, std::memory_order_relaxed);
  block.allocated_bits.store(0, std::memory_order_relaxed);
  block.state.store(BlockState::kActive, std::memory_order_release);
  // Connect the subscribers that exist now, so nothing published from here
  // on is missed while they discover us.
  std::vector<SlotRef> subscriber_nodes;
  for (std::uint32_t s = 0; s < kMaxSubscribers; ++s) {
    const EndpointEntry& sub = registry_.subscriber(s);
    if (sub.state == EntryState::kActive && sub.topic == *topic_slot) {
      // The history is empty yet: nothing to hand over, connect directly.
      if (auto conn = create_connection(*own_pool_, block_index, {s, sub.generation}, false); !conn) {
        logger().warn("topic '{}': {}", topic.name, conn.error().message());
        continue;
      }
      const SlotRef node{sub.participant, sub.participant_generation};
      if (node != self_ && std::ranges::find(subscriber_nodes, node) == subscriber_nodes.end()) {
        subscriber_nodes.push_back(node);
      }
    }
  }
  auto port = std::make_shared<ShmPublisherPort>(shared_from_this(), own_pool_, block_index, *pub, *topic_slot,
                                                 topic.name, qos);
  if (block.history_depth > 0) {
    std::lock_guard<std::mutex> durable_guard(durable_mutex_);
    durable_publishers_.push_back(port.get());  // until its destructor calls forget_durable()
    durable_count_.store(static_cast<std::uint32_t>(durable_publishers_.size()), std::memory_order_relaxed);
  }
  guard.reset();
  // Before the first publish: the nodes of the subscribers we just connected
  // hold our pool from now on, even if they never took anything and we exit.
  deposit_own_pool(subscriber_nodes);
  return std::shared_ptr<PublisherPort>(std::move(port));
}

Result<std::shared_ptr<SubscriberPort>> ShmTransport::subscribe(const TopicDescriptor& topic,
                                                                const SubscriberQos& qos) {
  auto queue = effective_queue(qos);
  if (!queue) {
    return Error(queue.error().code(), fmt::format("topic '{}': {}", topic.name, queue.error().message()));
  }
  static_assert(kRingCapacity == 256, "effective_queue() checks depth against 256");
  // Read first: a fetch that ends after it wakes the wait below.
  std::uint64_t events = fetch_events();
  if (auto locked = lock_.lock(); !locked) {
    return locked.error();
  }
  std::optional<DomainLockGuard> guard(std::in_place, lock_);
  if (!registry_intact_locked()) {
    return damaged_registry_error(topic.name);
  }
  auto topic_slot = registry_.find_or_add_topic(topic);
  if (!topic_slot) {
    return topic_slot.error();
  }
  // Refused now rather than accepted and never connected to some publisher.
  if (auto room = check_subscribe_limits(registry_, *topic_slot, topic.name); !room) {
    return room.error();
  }
  auto sub = registry_.add_subscriber(*topic_slot, self_, qos, *queue);
  if (!sub) {
    return sub.error();
  }
  auto port = std::make_shared<ShmSubscriberPort>(shared_from_this(), *sub, *topic_slot, topic.name, qos);
  port->rescan_locked();
  guard.reset();
  // Pools of publishers this process has not mapped yet are being fetched by
  // the service thread; wait a little for them, outside the lock, so that
  // normally we return connected to every live publisher. A stopped one
  // costs at most kSubscribeWaitNs; take() links it once it answers.
  const std::int64_t deadline = monotonic_now_ns() + kSubscribeWaitNs;
  while (port->missing_pools() && monotonic_now_ns() < deadline) {
    events = wait_for_fetch(events, deadline);
    port->rescan();
  }
  return std::shared_ptr<SubscriberPort>(port);
}

std::vector<PoolClassStats> ShmTransport::pool_stats() const {
  std::vector<PoolClassStats> stats;
  const ChunkPool& pool = own_pool_->pool;
  for (std::uint32_t i = 0; i < pool.class_count(); ++i) {
    const SizeClass& sc = pool.size_class(i);
    stats.push_back(
        {.payload_bytes = sc.payload_capacity, .total_chunks = sc.chunk_count, .free_chunks = pool.free_chunks(i)});
  }
  return stats;
}

}  // namespace axon::shm
