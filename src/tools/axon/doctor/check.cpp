#include "src/tools/axon/doctor/check.hpp"

#include <fmt/format.h>

#include <utility>

#include "axon/options.hpp"

namespace axon::tools::doctor {

std::string_view to_string(Status status) noexcept {
  switch (status) {
    case Status::kPass: return "pass";
    case Status::kWarn: return "warn";
    case Status::kFail: return "fail";
    case Status::kSkip: return "skip";
  }
  return "skip";
}

CheckResult pass(std::string found) {
  return {.name = {}, .status = Status::kPass, .found = std::move(found), .fix = {}};
}

CheckResult skip(std::string found) {
  return {.name = {}, .status = Status::kSkip, .found = std::move(found), .fix = {}};
}

CheckResult warn(std::string found, std::string fix) {
  return {.name = {}, .status = Status::kWarn, .found = std::move(found), .fix = std::move(fix)};
}

CheckResult fail(std::string found, std::string fix) {
  return {.name = {}, .status = Status::kFail, .found = std::move(found), .fix = std::move(fix)};
}

std::string format_bytes(std::uint64_t bytes) {
  constexpr std::uint64_t kKiB = 1024;
  if (bytes < kKiB) {
    return fmt::format("{} B", bytes);
  }
  constexpr std::pair<std::uint64_t, const char*> kUnits[] = {
      {kKiB * kKiB * kKiB * kKiB, "TiB"}, {kKiB * kKiB * kKiB, "GiB"}, {kKiB * kKiB, "MiB"}, {kKiB, "KiB"}};
  for (const auto& [unit, name] : kUnits) {
    if (bytes >= unit) {
      if (bytes % unit == 0) {
        return fmt::format("{} {}", bytes / unit, name);
      }
      return fmt::format("{:.1f} {}", static_cast<double>(bytes) / static_cast<double>(unit), name);
    }
  }
  return fmt::format("{} B", bytes);
}

std::string format_limit_bytes(std::uint64_t bytes) {
  return bytes == Limit::kUnlimited ? std::string("unlimited") : format_bytes(bytes);
}

std::uint64_t default_pool_bytes() {
  std::uint64_t bytes = 0;
  for (const auto& chunk_class : default_chunk_classes()) {
    bytes += std::uint64_t{chunk_class.payload_bytes} * chunk_class.count;
  }
  return bytes;
}

bool may_lock(const ProcessFacts& facts, std::uint64_t bytes) noexcept {
  return facts.cap_ipc_lock || facts.memlock.soft == Limit::kUnlimited || facts.memlock.soft >= bytes;
}

std::string memlock_limits(const ProcessFacts& facts) {
  return fmt::format("RLIMIT_MEMLOCK soft {}, hard {}", format_limit_bytes(facts.memlock.soft),
                     format_limit_bytes(facts.memlock.hard));
}

std::string memlock_fix() {
  return "ulimit -l unlimited (in the shell that starts the program, up to the hard limit); for good: a line "
         "'<user> - memlock unlimited' in /etc/security/limits.conf, LimitMEMLOCK=infinity in the systemd unit, "
         "or docker run --ulimit memlock=-1; or grant the program CAP_IPC_LOCK: sudo setcap cap_ipc_lock+ep "
         "<program>";
}

}  // namespace axon::tools::doctor
