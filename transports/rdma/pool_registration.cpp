#include "transports/rdma/pool_registration.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <string>
#include <utility>

#include "src/base/errors.hpp"
#include "transports/rdma/cm_event.hpp"
#include "transports/rdma/device_list.hpp"
#include "transports/rdma/immediate.hpp"

namespace axon::rdma {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::uint64_t total_chunks(const shm::ChunkArea& area) noexcept {
  std::uint64_t chunks = 0;
  for (const shm::ChunkClassExtent& c : area.class_list()) {
    chunks += c.chunk_count;
  }
  return chunks;
}

}  // namespace

Result<void> check_classes_receivable(const shm::ChunkArea& area, std::string_view node) {
  const auto classes = area.class_list();
  for (std::size_t i = 0; i < classes.size(); ++i) {
    if (max_grant_slots(classes[i].payload_capacity) != 0) {
      continue;
    }
    return Error(
        ErrorCode::kInvalidArgument,
        fmt::format("node '{}': nodes[].pool.chunk_classes entry {} ({} chunks of {} bytes, {:.0f} MiB) "
                    "cannot be received over RDMA: the immediate value of a write has no grant slot left "
                    "for chunks of 256 MiB or more; make the class smaller than 256 MiB (268435456 bytes) "
                    "or do not use transport rdma or auto on this node's host",
                    node, i, classes[i].chunk_count, classes[i].payload_capacity, classes[i].payload_capacity / kMiB));
  }
  return {};
}

PoolRegistration::PoolRegistration(DeviceChoice device, ibv_context* context, PdHandle pd, MrHandle mr,
                                   const shm::ChunkArea& area) noexcept
    : device_(std::move(device)), context_(context), pd_(std::move(pd)), mr_(std::move(mr)), area_(area) {}

PoolRegistration& PoolRegistration::operator=(PoolRegistration&& other) noexcept {
  if (this != &other) {
    mr_.reset();  // ibv_dealloc_pd refuses (EBUSY) a domain that still has a region
    pd_ = std::move(other.pd_);
    mr_ = std::move(other.mr_);
    device_ = std::move(other.device_);
    context_ = std::exchange(other.context_, nullptr);
    area_ = other.area_;
  }
  return *this;
}

Result<PoolRegistration> PoolRegistration::create(const DeviceChoice& device, const shm::ChunkArea& area,
                                                  std::string_view node) {
  if (auto receivable = check_classes_receivable(area, node); !receivable.ok()) {
    return receivable.error();
  }
  auto context = cm_device_context(device.device);
  if (!context.ok()) {
    return context.error();
  }
  PdHandle pd(ibv_alloc_pd(context.value()));
  if (pd == nullptr) {
    return Error(ErrorCode::kSystem, fmt::format("cannot allocate a protection domain on RDMA device {}: "
                                                 "ibv_alloc_pd failed ({})",
                                                 device.device, errno_text(errno)));
  }
  const auto bytes = static_cast<double>(area.bytes);
  const std::string what =
      bytes < kMiB
          ? fmt::format("the pool of node '{}' ({} chunks, {:.0f} KiB)", node, total_chunks(area), bytes / 1024)
          : fmt::format("the pool of node '{}' ({} chunks, {:.1f} MiB)", node, total_chunks(area), bytes / kMiB);
  auto mr = register_region(pd.get(), area.base, area.bytes, what);
  if (!mr.ok()) {
    return mr.error();
  }
  return PoolRegistration(device, context.value(), std::move(pd), std::move(mr.value()), area);
}

Result<PoolRegistration> PoolRegistration::create(const DeviceRequest& request, const shm::ChunkArea& area,
                                                  std::string_view node) {
  if (auto receivable = check_classes_receivable(area, node); !receivable.ok()) {
    return receivable.error();
  }
  auto devices = list_devices();
  if (!devices.ok()) {
    return devices.error();
  }
  auto choice = choose_device(*devices, request);
  if (!choice.ok()) {
    return choice.error();
  }
  return create(*choice, area, node);
}

}  // namespace axon::rdma
