#include "src/tools/axon/doctor/host_view.hpp"

#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>

namespace axon::tools::doctor {
namespace {

Limit limit_of(int resource) {
  rlimit limit{};
  if (::getrlimit(resource, &limit) != 0) {
    return {};
  }
  auto bytes = [](rlim_t value) { return value == RLIM_INFINITY ? Limit::kUnlimited : std::uint64_t{value}; };
  return {.soft = bytes(limit.rlim_cur), .hard = bytes(limit.rlim_max)};
}

struct Capabilities {
  bool ipc_lock = false;
  bool sys_nice = false;
  bool net_admin = false;
};

Capabilities effective_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) {
    return {};  // unknown: the checks then say what the limits alone allow
  }
  auto has = [&data](unsigned cap) { return (data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap)) != 0; };
  return {.ipc_lock = has(CAP_IPC_LOCK), .sys_nice = has(CAP_SYS_NICE), .net_admin = has(CAP_NET_ADMIN)};
}

std::optional<SpaceBytes> space_of(const std::string& dir) {
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) {
    return std::nullopt;
  }
  return SpaceBytes{.total_bytes = std::uint64_t{vfs.f_blocks} * vfs.f_frsize,
                    .free_bytes = std::uint64_t{vfs.f_bavail} * vfs.f_frsize};
}

}  // namespace

std::string trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(kSpace);
  return std::string(text.substr(first, last - first + 1));
}

HostView::HostView(std::filesystem::path root, ProcessFacts facts) : root_(std::move(root)), facts_(std::move(facts)) {}

HostView HostView::local() {
  ProcessFacts facts;
  facts.memlock = limit_of(RLIMIT_MEMLOCK);
  facts.rtprio = limit_of(RLIMIT_RTPRIO);
  const Capabilities caps = effective_capabilities();
  facts.cap_ipc_lock = caps.ipc_lock;
  facts.cap_sys_nice = caps.sys_nice;
  facts.cap_net_admin = caps.net_admin;
  // As NodeOptions::shm_dir defaults.
  const char* dir = std::getenv("AXON_SHM_DIR");  // NOLINT(concurrency-mt-unsafe): before any thread starts
  if (dir != nullptr && *dir != '\0') {
    facts.shm_dir = dir;
  }
  facts.shm_space = space_of(facts.shm_dir);
  return {"/", std::move(facts)};
}

std::filesystem::path HostView::under_root(std::string_view path) const {
  // root_ / "/proc" would discard root_: join the relative part.
  while (!path.empty() && path.front() == '/') {
    path.remove_prefix(1);
  }
  return root_ / path;
}

std::optional<std::string> HostView::read(std::string_view path) const {
  std::ifstream in(under_root(path), std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> HostView::read_trimmed(std::string_view path) const {
  auto text = read(path);
  if (!text) {
    return std::nullopt;
  }
  return trim(*text);
}

std::vector<std::string> HostView::list(std::string_view path) const {
  std::vector<std::string> names;
  std::error_code error;
  for (std::filesystem::directory_iterator it(under_root(path), error), end; !error && it != end; it.increment(error)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool HostView::exists(std::string_view path) const {
  std::error_code error;
  return std::filesystem::exists(under_root(path), error);
}

std::vector<std::string> HostView::process_names() const {
  std::vector<std::string> names;
  for (const auto& entry : list("/proc")) {
    if (entry.empty() || !std::all_of(entry.begin(), entry.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    // A process that exits while we look leaves no comm: skip it.
    if (auto comm = read_trimmed("/proc/" + entry + "/comm")) {
      names.push_back(std::move(*comm));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace axon::tools::doctor
