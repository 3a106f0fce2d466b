#include "rdma/perftest_baseline.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace axon_bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kServerReady = std::chrono::seconds(15);
constexpr auto kRunLimit = std::chrono::seconds(180);

/// The numbers of the first line of `output` that starts with `bytes`
/// (perftest's result line: "<bytes> <iterations> ..."); empty when none.
std::vector<double> result_fields(std::string_view output, std::uint64_t columns) {
  std::istringstream lines{std::string(output)};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<double> fields;
    for (std::string word; words >> word;) {
      char* end = nullptr;
      const double value = std::strtod(word.c_str(), &end);
      if (end == word.c_str() || *end != '\0') {
        break;
      }
      fields.push_back(value);
    }
    if (fields.size() >= columns) {
      return fields;
    }
  }
  return {};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// One perftest process whose stdout and stderr go to a file.
class PerftestProcess {
 public:
  PerftestProcess(std::vector<std::string> argv, int cpu, const std::string& output_path)
      : output_(output_path), command_(argv.at(0)) {
    // Line-buffered: perftest prints with stdio, which would keep "Waiting
    // for client" in its buffer until it exits when writing to a file.
    argv.insert(argv.begin(), {"stdbuf", "-oL"});
    if (cpu >= 0) {
      argv.insert(argv.begin(), {"taskset", "-c", std::to_string(cpu)});
    }
    pid_ = ::fork();
    if (pid_ < 0) {
      throw std::runtime_error("rdma: fork for " + command_ + " failed");
    }
    if (pid_ == 0) {
      const int fd = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0 || ::dup2(fd, STDERR_FILENO) < 0) {
        ::_exit(126);
      }
      std::vector<char*> args;
      for (std::string& a : argv) {
        args.push_back(a.data());
      }
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
  }
  ~PerftestProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      (void)::waitpid(pid_, nullptr, 0);
    }
    ::unlink(output_.c_str());
  }
  PerftestProcess(const PerftestProcess&) = delete;
  PerftestProcess& operator=(const PerftestProcess&) = delete;

  [[nodiscard]] std::string output() const { return read_file(output_); }

  /// The exit status once it ended (128 + signal when killed), or nothing while it runs.
  std::optional<int> poll() {
    if (status_) {
      return status_;
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return status_;
  }
  /// Waits until it ended, at most until `deadline`; then kills it.
  int finish(Clock::time_point deadline) {
    while (!poll()) {
      if (Clock::now() > deadline) {
        throw std::runtime_error("rdma: " + command_ + " did not finish within " + std::to_string(kRunLimit.count()) +
                                 " s; its output:\n" + output());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return *status_;
  }
  [[nodiscard]] const std::string& command() const noexcept { return command_; }

 private:
  std::string output_;
  std::string command_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

/// Runs server then client with `args` (the client adds the server's
/// address) and returns the client's output. perftest prints its result on both sides.
std::string run_pair(const PerftestSetup& setup, const std::string& tool, const std::vector<std::string>& args) {
  if (setup.addresses.size() != 2) {
    throw std::runtime_error("rdma: perftest needs two addresses (server, client)");
  }
  std::vector<int> gids;
  for (const std::string& address : setup.addresses) {
    const auto gid = roce_v2_gid_index(setup.device, setup.port, address);
    if (!gid) {
      throw std::runtime_error("rdma: " + setup.device + " port " + std::to_string(setup.port) +
                               " has no RoCE v2 GID for " + address +
                               " (is the address on the device's network interface?)");
    }
    gids.push_back(*gid);
  }
  const auto side_args = [&](std::size_t k) {
    std::vector<std::string> argv{tool,
                                  "-d",
                                  setup.device,
                                  "-i",
                                  std::to_string(setup.port),
                                  "-x",
                                  std::to_string(gids[k]),
                                  "-p",
                                  std::to_string(setup.tcp_port),
                                  "-F"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  };
  const std::string stem = "/tmp/axon-bench-" + tool + "-" + std::to_string(::getpid());
  PerftestProcess server(side_args(0), setup.cpus.at(0), stem + ".server");
  const auto ready_by = Clock::now() + kServerReady;
  while (server.output().find("Waiting for client") == std::string::npos) {
    if (const auto status = server.poll(); status) {
      throw std::runtime_error("rdma: " + tool + " server exited with " + std::to_string(*status) +
                               (*status == 127 ? " (not installed? apt install perftest)" : "") + "; its output:\n" +
                               server.output());
    }
    if (Clock::now() > ready_by) {
      throw std::runtime_error("rdma: " + tool + " server did not wait for a client within 15 s; its output:\n" +
                               server.output());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<std::string> client_args = side_args(1);
  client_args.push_back(setup.addresses[0]);
  PerftestProcess client(client_args, setup.cpus.at(1), stem + ".client");
  const auto deadline = Clock::now() + kRunLimit;
  const int client_status = client.finish(deadline);
  const int server_status = server.finish(deadline);
  if (client_status != 0 || server_status != 0) {
    throw std::runtime_error("rdma: " + tool + " failed (client " + std::to_string(client_status) + ", server " +
                             std::to_string(server_status) + "); client output:\n" + client.output() +
                             "\nserver output:\n" + server.output());
  }
  return client.output();
}

}  // namespace

std::optional<PerftestLatency> parse_write_lat(std::string_view output) {
  // #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
  const std::vector<double> f = result_fields(output, 9);
  if (f.empty()) {
    return std::nullopt;
  }
  return PerftestLatency{.bytes = static_cast<std::uint64_t>(f[0]),
                         .iterations = static_cast<std::uint64_t>(f[1]),
                         .min_us = f[2],
                         .max_us = f[3],
                         .typical_us = f[4],
                         .avg_us = f[5],
                         .p99_us = f[7],
                         .p999_us = f[8]};
}

std::optional<PerftestBandwidth> parse_write_bw(std::string_view output) {
  // #bytes #iterations BW_peak BW_average MsgRate
  const std::vector<double> f = result_fields(output, 5);
  if (f.empty()) {
    return std::nullopt;
  }
  return PerftestBandwidth{.bytes = static_cast<std::uint64_t>(f[0]),
                           .iterations = static_cast<std::uint64_t>(f[1]),
                           .peak_mib_per_s = f[2],
                           .average_mib_per_s = f[3]};
}

std::optional<int> roce_v2_gid_index(const std::string& device, int port, const std::string& ipv4) {
  in_addr address{};
  if (::inet_pton(AF_INET, ipv4.c_str(), &address) != 1) {
    return std::nullopt;
  }
  const std::uint32_t host = ntohl(address.s_addr);
  char mapped[64];
  std::snprintf(mapped, sizeof mapped, "0000:0000:0000:0000:0000:ffff:%04x:%04x", host >> 16U, host & 0xFFFFU);
  const std::string ports = "/sys/class/infiniband/" + device + "/ports/" + std::to_string(port);
  for (int index = 0; index < 256; ++index) {
    std::string gid = read_file(ports + "/gids/" + std::to_string(index));
    std::string type = read_file(ports + "/gid_attrs/types/" + std::to_string(index));
    if (gid.rfind(mapped, 0) == 0 && type.find("RoCE v2") != std::string::npos) {
      return index;
    }
  }
  return std::nullopt;
}

PerftestLatency run_write_lat(const PerftestSetup& setup, std::uint64_t bytes, std::uint64_t iterations) {
  const std::string output =
      run_pair(setup, "ib_write_lat", {"-s", std::to_string(bytes), "-n", std::to_string(iterations)});
  auto parsed = parse_write_lat(output);
  if (!parsed) {
    throw std::runtime_error("rdma: no result line in ib_write_lat's output:\n" + output);
  }
  return *parsed;
}

PerftestBandwidth run_write_bw(const PerftestSetup& setup, std::uint64_t bytes, std::uint64_t iterations) {
  // -n, not -D: in duration mode rxe reports 0 iterations for 1 MiB writes.
  const std::string output =
      run_pair(setup, "ib_write_bw", {"-s", std::to_string(bytes), "-n", std::to_string(iterations)});
  auto parsed = parse_write_bw(output);
  if (!parsed) {
    throw std::runtime_error("rdma: no result line in ib_write_bw's output:\n" + output);
  }
  return *parsed;
}

}  // namespace axon_bench
