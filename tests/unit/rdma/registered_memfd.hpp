// What the on-device rdma_cm tests need on each side: a MAP_SHARED memfd of
// `bytes` (the pool stand-in), a protection domain on librdmacm's context of
// the device (cm_device_context(): rdma_create_qp needs that one), one
// completion queue and the memfd registered for local and remote writes
// (transports/rdma/verbs_handles.hpp). Errors as text, so a child process
// can print them.
#pragma once

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "src/base/errors.hpp"
#include "transports/rdma/cm_event.hpp"
#include "transports/rdma/post_write.hpp"
#include "transports/rdma/verbs_handles.hpp"

namespace axon::rdma::test {

/// The guest's two "hosts" on rxe0 (softroce_stage.sh adds 10.0.2.16), host order.
inline constexpr std::uint32_t kHostA = (10U << 24) | (2U << 8) | 15U;
inline constexpr std::uint32_t kHostB = (10U << 24) | (2U << 8) | 16U;

class RegisteredMemfd {
 public:
  static constexpr std::uint32_t kPort = 1;
  /// Opens `device` and registers a new memfd of `bytes`; nullptr and `error` set when a step fails.
  static std::unique_ptr<RegisteredMemfd> open(const std::string& device, std::size_t bytes, std::string& error) {
    auto r = std::unique_ptr<RegisteredMemfd>(new RegisteredMemfd(bytes));
    r->fd_ = memfd_create("axon-rdma-cm-test", MFD_CLOEXEC);
    if (r->fd_ < 0 || ftruncate(r->fd_, static_cast<off_t>(bytes)) != 0) {
      error = "memfd: " + errno_text(errno);
      return nullptr;
    }
    void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd_, 0);
    if (base == MAP_FAILED) {
      error = "mmap: " + errno_text(errno);
      return nullptr;
    }
    r->base_ = static_cast<std::byte*>(base);
    auto context = cm_device_context(device);
    if (!context.ok()) {
      error = std::string(context.error().message());
      return nullptr;
    }
    r->pd_.reset(ibv_alloc_pd(context.value()));
    if (r->pd_ != nullptr) {
      r->cq_.reset(ibv_create_cq(context.value(), 64, nullptr, nullptr, 0));
    }
    if (r->cq_ == nullptr) {
      error = "ibv_alloc_pd/ibv_create_cq: " + errno_text(errno);
      return nullptr;
    }
    auto mr = register_region(r->pd_.get(), r->base_, bytes, "the test region");
    if (!mr.ok()) {
      error = std::string(mr.error().message());
      return nullptr;
    }
    r->mr_ = std::move(mr.value());
    auto max_message = port_max_message_bytes(context.value(), kPort);
    if (!max_message.ok()) {
      error = std::string(max_message.error().message());
      return nullptr;
    }
    r->max_message_bytes_ = max_message.value();
    return r;
  }

  RegisteredMemfd(const RegisteredMemfd&) = delete;
  RegisteredMemfd& operator=(const RegisteredMemfd&) = delete;
  ~RegisteredMemfd() {
    mr_.reset();
    cq_.reset();
    pd_.reset();
    if (base_ != nullptr) {
      munmap(base_, bytes_);
    }
    if (fd_ >= 0) {
      close(fd_);
    }
  }

  [[nodiscard]] std::byte* base() const noexcept { return base_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] ibv_pd* pd() const noexcept { return pd_.get(); }
  [[nodiscard]] ibv_cq* cq() const noexcept { return cq_.get(); }
  [[nodiscard]] ibv_mr* mr() const noexcept { return mr_.get(); }
  /// max_msg_sz of the device's port (rxe0 has one), for the private data.
  [[nodiscard]] std::uint32_t max_message_bytes() const noexcept { return max_message_bytes_; }

 private:
  explicit RegisteredMemfd(std::size_t bytes) : bytes_(bytes) {}
  std::size_t bytes_;
  int fd_ = -1;
  std::byte* base_ = nullptr;
  PdHandle pd_;
  CqHandle cq_;
  MrHandle mr_;
  std::uint32_t max_message_bytes_ = 0;
};

}  // namespace axon::rdma::test
