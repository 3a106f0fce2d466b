#include "soak/process_sample.hpp"

#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace axon_bench {
namespace {

/// Opens /proc/PID/<name>; null when the process is gone.
std::FILE* open_proc(int pid, const char* name) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
  return std::fopen(path, "re");
}

/// VmRSS (KiB) and Threads of /proc/PID/status.
bool read_status(int pid, ProcessSample& out) {
  std::FILE* f = open_proc(pid, "status");
  if (f == nullptr) {
    return false;
  }
  char line[256];
  bool rss = false;
  bool threads = false;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) {
      out.rss_kib = std::strtod(line + 6, nullptr);
      rss = true;
    } else if (std::strncmp(line, "Threads:", 8) == 0) {
      out.threads = std::strtod(line + 8, nullptr);
      threads = true;
    }
  }
  std::fclose(f);
  return rss && threads;
}

/// Lines of /proc/PID/maps, and those whose path is under `shm_dir`.
bool read_maps(int pid, const std::string& shm_dir, ProcessSample& out) {
  std::FILE* f = open_proc(pid, "maps");
  if (f == nullptr) {
    return false;
  }
  // Lines longer than the buffer (long paths) come in pieces: count line ends, look for the path in each piece.
  char line[512];
  const std::string shm_path = " " + shm_dir + "/";  // the path column follows a run of spaces
  bool shm_seen = false;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    shm_seen = shm_seen || std::strstr(line, shm_path.c_str()) != nullptr;
    if (std::strchr(line, '\n') != nullptr) {
      out.maps += 1;
      out.shm_maps += shm_seen ? 1 : 0;
      shm_seen = false;
    }
  }
  std::fclose(f);
  return true;
}

/// Entries of /proc/PID/fd (for this process itself, the directory being read is one of them: a constant).
bool count_fds(int pid, ProcessSample& out) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/fd", pid);
  DIR* dir = ::opendir(path);
  if (dir == nullptr) {
    return false;
  }
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') {
      out.fds += 1;
    }
  }
  ::closedir(dir);
  return true;
}

}  // namespace

std::optional<ProcessSample> read_process_sample(int pid, const std::string& shm_dir) {
  ProcessSample sample;
  if (!read_status(pid, sample) || !read_maps(pid, shm_dir, sample) || !count_fds(pid, sample)) {
    return std::nullopt;
  }
  return sample;
}

}  // namespace axon_bench
