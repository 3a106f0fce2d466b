// The registry file of DomainMembership: opened when valid, created when
// missing or stale, replaced when damaged and abandoned. Under the domain
// lock (join()).
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <new>
#include <random>

#include "src/base/clock.hpp"
#include "src/base/errors.hpp"
#include "src/base/log.hpp"
#include "transports/shm/abi_hash.hpp"
#include "transports/shm/domain_membership.hpp"

namespace axon::shm {

Result<void> DomainMembership::open_or_create_registry(const DomainLockGuard& held) {
  const std::string path = registry_path();
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) {
      return system_error(errno, fmt::format("open {}", path));
    }
    remove_stale_files(held);
    return create_registry(held);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return system_error(err, fmt::format("fstat of {}", path));
  }
  const auto file_bytes = static_cast<std::size_t>(st.st_size);
  // Its tables' size comes from its limits, checked once mapped (attach_tables()).
  if (file_bytes <
      RegistryLayout::of(
          RegistryLimits{.participants = 1, .topics = 1, .publishers = 1, .subscribers = 1, .publishers_per_topic = 1})
          .total_bytes) {
    auto replaced = replace_of_wrong_size(held, fd, file_bytes);
    ::close(fd);
    return replaced;
  }
  if (const std::string damaged = size_mismatch(fd, file_bytes); !damaged.empty()) {
    auto replaced = replace_if_abandoned(held, fd, damaged);
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
  if (header.magic != kSegmentMagic) {
    if (header.magic != 0) {  // not axon's: never delete what we cannot identify
      auto error = check_header(header, SegmentKind::kRegistry, layout_abi_hash(), file_bytes, path).error();
      forget_registry();
      return error;
    }
    // Zeroed: truncated and grown again (by a node's SIGBUS guard).
    auto replaced =
        replace_if_abandoned(held, registry_mapping_.fd(), "its header is zero: it was truncated while mapped");
    if (!replaced) {
      forget_registry();
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
      forget_registry();
      return ok.error();
    }
    if (auto damaged = attach_tables(file_bytes); !damaged.empty()) {
      auto replaced = replace_if_abandoned(held, registry_mapping_.fd(), damaged);
      if (!replaced) {
        forget_registry();
        return replaced.error();
      }
      return {};
    }
    reclaim_dead_participants(held);
    if (registry_.active_participants(held) > 0) {
      return {};
    }
  }
  // Every owner is gone: what is here is stale. Start the domain afresh.
  logger().info("removing stale axon domain {} files left by dead processes in {}", config_.domain_id, config_.shm_dir);
  forget_registry();
  ::unlink(path.c_str());
  remove_stale_files(held);
  return create_registry(held);
}

Result<void> DomainMembership::replace_of_wrong_size(const DomainLockGuard& held, int fd, std::size_t file_bytes) {
  // Read, not mapped: a file shorter than its header cannot fault here.
  SegmentHeader header;
  // Another build's registry (of another size), or a file that is not
  // axon's at all (neither our magic nor zeros): never ours to replace.
  if (file_bytes >= sizeof(SegmentHeader) && ::pread(fd, &header, sizeof(header), 0) == sizeof(header) &&
      (header.magic == kSegmentMagic ? header.layout_version != kLayoutVersion || header.abi_hash != layout_abi_hash()
                                     : header.magic != 0)) {
    return check_header(header, SegmentKind::kRegistry, layout_abi_hash(), file_bytes, registry_path()).error();
  }
  return replace_if_abandoned(
      held, fd,
      fmt::format("it has {} bytes, fewer than any registry of this build: it was truncated or overwritten",
                  file_bytes));
}

std::string DomainMembership::attach_tables(std::size_t file_bytes) {
  // Another process wrote the limits: copied once, checked, and only the
  // copy is used from here on (a later stray write cannot move an index).
  const RegistryLimits limits = registry_segment_->limits;
  if (!limits.in_range()) {
    return fmt::format("its limits ({}) are out of range", describe_limits(limits));
  }
  const RegistryLayout layout = RegistryLayout::of(limits);
  if (layout.total_bytes != file_bytes) {
    return fmt::format("its limits ({}) need {} bytes, the file has {}", describe_limits(limits), layout.total_bytes,
                       file_bytes);
  }
  registry_ = Registry(registry_segment_, layout);
  registry_.set_schema_files(config_.shm_dir, config_.domain_id);
  return {};
}

std::string DomainMembership::size_mismatch(int fd, std::size_t file_bytes) {
  // Read, not mapped: the file may be shorter than its head says.
  SegmentHeader header;
  RegistryLimits limits{};
  if (::pread(fd, &header, sizeof(header), 0) != sizeof(header) ||
      ::pread(fd, &limits, sizeof(limits), offsetof(RegistrySegment, limits)) != sizeof(limits) ||
      header.magic != kSegmentMagic || header.layout_version != kLayoutVersion ||
      header.abi_hash != layout_abi_hash()) {
    return {};  // not a registry of this build: the checks after mapping say what it is
  }
  if (!limits.in_range()) {
    return fmt::format("its limits ({}) are out of range: it was overwritten", describe_limits(limits));
  }
  const std::size_t needed = RegistryLayout::of(limits).total_bytes;
  if (needed != file_bytes || header.total_bytes != file_bytes) {
    return fmt::format("it has {} bytes, but its limits ({}) need {}: it was truncated or overwritten", file_bytes,
                       describe_limits(limits), needed);
  }
  return {};
}

void DomainMembership::forget_registry() noexcept {
  registry_ = Registry();
  registry_segment_ = nullptr;
  registry_guard_ = GuardedMapping();
  registry_mapping_ = MappedSegment();
}

Result<void> DomainMembership::adopt_registry(MappedSegment mapping) {
  // Guarded before anything reads it: a truncation from now on is survived.
  auto guarded = GuardedMapping::guard(mapping.base(), mapping.bytes(), mapping.fd());
  if (!guarded) {
    return guarded.error();
  }
  registry_guard_ = std::move(*guarded);  // first: the old guard goes before its mapping
  registry_mapping_ = std::move(mapping);
  registry_segment_ = std::launder(reinterpret_cast<RegistrySegment*>(registry_mapping_.base()));
  registry_ = Registry();  // no tables until their limits are checked (attach_tables()) or formatted
  return {};
}

Result<void> DomainMembership::replace_if_abandoned(const DomainLockGuard& held, int fd, const std::string& what) {
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
  remove_stale_files(held);
  return create_registry(held);
}

void DomainMembership::remove_stale_files(const DomainLockGuard& /*held*/) const {
  DIR* dir = ::opendir(config_.shm_dir.c_str());
  if (dir == nullptr) {
    return;
  }
  const std::string prefix = fmt::format("axon_d{}_p", config_.domain_id);
  // Topics' schema files (topic_schema_file.hpp) of a domain whose registry is gone.
  const std::string schema_prefix = fmt::format("axon_d{}_t", config_.domain_id);
  while (const dirent* entry = ::readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): own DIR stream
    const std::string_view name = entry->d_name;
    if ((name.starts_with(prefix) && (name.ends_with(".sock") || name.ends_with(".stats"))) ||
        (name.starts_with(schema_prefix) && name.ends_with(".schema"))) {
      ::unlink(fmt::format("{}/{}", config_.shm_dir, name).c_str());
    }
  }
  ::closedir(dir);
}

Result<void> DomainMembership::create_registry(const DomainLockGuard& /*held*/) {
  const RegistryLayout layout = RegistryLayout::of(config_.limits.value_or(RegistryLimits{}));
  auto created = create_named_segment(registry_path(), layout.total_bytes, config_.file_mode, config_.group);
  if (!created) {
    return created.error();
  }
  if (auto adopted = adopt_registry(std::move(*created)); !adopted) {
    ::unlink(registry_path().c_str());
    return adopted.error();
  }
  init_header(registry_segment_->header, SegmentKind::kRegistry, layout_abi_hash(), layout.total_bytes);
  Registry::format(registry_segment_, layout);
  std::random_device entropy;
  registry_segment_->incarnation =
      (std::uint64_t{entropy()} << 32) ^ entropy() ^ static_cast<std::uint64_t>(monotonic_now_ns());
  registry_ = Registry(registry_segment_, layout);
  registry_.set_schema_files(config_.shm_dir, config_.domain_id);
  // Release pairs with the acquire in open_or_create_registry().
  registry_segment_->header.ready.store(1, std::memory_order_release);
  return {};
}

}  // namespace axon::shm
