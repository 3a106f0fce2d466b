// The node's own pool chunks registered once with the RDMA device: the
// source of what its publishers send and the target of what its mirrors
// receive (docs/design/rdma-transport.md, "Memory registration"). Only the
// chunks (shm::ChunkArea): the pool's publisher blocks, connections and
// rings before them are never remotely writable.
//
// Before anything is pinned it refuses a pool that RDMA cannot serve (a
// chunk class of 256 MiB or more: the immediate value has no grant slot for
// it) and a pool larger than RLIMIT_MEMLOCK lets this process pin
// (pin_limit.hpp), each with an error that names the config key.
//
// Thread safety: create() at start-up (allocates, system calls). The
// accessors and contains() are const, allocate nothing and make no system
// call: any thread, on the data path.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "axon/result.hpp"
#include "transports/rdma/device_choice.hpp"
#include "transports/rdma/span_inside.hpp"
#include "transports/rdma/verbs_handles.hpp"
#include "transports/shm/chunk_area.hpp"

namespace axon::rdma {

/// kInvalidArgument naming nodes[].pool.chunk_classes and the class when a
/// class of `area` cannot be received over RDMA (max_grant_slots() is 0: a
/// payload capacity of 256 MiB or more). `node` names the node in the config.
[[nodiscard]] Result<void> check_classes_receivable(const shm::ChunkArea& area, std::string_view node);

/// The protection domain and the memory region of a node's pool chunks,
/// owned: the region is deregistered, then the domain freed, when it goes.
class PoolRegistration {
 public:
  /// Registers `area` for local and remote writes on `device` (chosen by
  /// choose_device()), in a new protection domain on librdmacm's verbs
  /// context of the device (cm_device_context(): rdma_cm's queue pairs need
  /// their PD, CQs and MRs there). In order: the classes
  /// (check_classes_receivable()), the context, the PD, the pin check for
  /// area.bytes, ibv_reg_mr. `node` names the node in messages.
  [[nodiscard]] static Result<PoolRegistration> create(const DeviceChoice& device, const shm::ChunkArea& area,
                                                       std::string_view node);
  /// The same from the config's request: the classes first, then the
  /// devices of this machine (list_devices(), choose_device(): "no RDMA
  /// device found" and the other start-up errors), then as above.
  [[nodiscard]] static Result<PoolRegistration> create(const DeviceRequest& request, const shm::ChunkArea& area,
                                                       std::string_view node);

  PoolRegistration(PoolRegistration&& other) noexcept = default;
  /// The region goes before the domain it was registered in.
  PoolRegistration& operator=(PoolRegistration&& other) noexcept;
  PoolRegistration(const PoolRegistration&) = delete;
  PoolRegistration& operator=(const PoolRegistration&) = delete;
  ~PoolRegistration() = default;

  [[nodiscard]] const DeviceChoice& device() const noexcept { return device_; }
  /// librdmacm's context of the device (not owned): for the CQs.
  [[nodiscard]] ibv_context* context() const noexcept { return context_; }
  [[nodiscard]] ibv_pd* pd() const noexcept { return pd_.get(); }
  [[nodiscard]] std::uint32_t lkey() const noexcept { return mr_->lkey; }
  [[nodiscard]] std::uint32_t rkey() const noexcept { return mr_->rkey; }
  /// The registered bytes: the pool's chunks in this process's mapping.
  [[nodiscard]] std::byte* base() const noexcept { return area_.base; }
  [[nodiscard]] std::size_t length() const noexcept { return area_.bytes; }
  /// The chunks' classes, as registered.
  [[nodiscard]] const shm::ChunkArea& area() const noexcept { return area_; }

  /// Whether [address, address + bytes) lies inside the registered bytes
  /// (bytes 0: whether `address` is in them or just past the end).
  [[nodiscard]] bool contains(const void* address, std::size_t bytes) const noexcept {
    return span_inside(reinterpret_cast<std::uintptr_t>(area_.base), area_.bytes,
                       reinterpret_cast<std::uintptr_t>(address), bytes);
  }

 private:
  PoolRegistration(DeviceChoice device, ibv_context* context, PdHandle pd, MrHandle mr,
                   const shm::ChunkArea& area) noexcept;

  DeviceChoice device_;
  ibv_context* context_ = nullptr;
  PdHandle pd_;  ///< Declared before mr_: destroyed after it.
  MrHandle mr_;
  shm::ChunkArea area_;
};

}  // namespace axon::rdma
