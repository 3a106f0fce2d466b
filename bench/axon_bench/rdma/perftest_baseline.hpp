// The same-run baseline of `axon-bench rdma`: perftest's ib_write_lat and
// ib_write_bw (Debian package perftest) between the two addresses of one
// RDMA device, server and client as two processes pinned like axon's pair.
// Their outputs are parsed here; what perftest reports is what the tables
// show (ib_write_lat: half the round trip of a busy-polled write; ib_write_bw:
// MiB/s of back-to-back writes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace axon_bench {

struct PerftestSetup {
  std::string device;                  ///< ib_write_* -d
  int port = 1;                        ///< -i
  std::vector<std::string> addresses;  ///< [server, client]: IPv4 addresses on the device's netdev.
  std::vector<int> cpus{-1, -1};       ///< taskset -c for server and client (-1: not pinned).
  std::uint16_t tcp_port = 18515;      ///< -p: perftest's exchange of the QP numbers.
};

/// What ib_write_lat printed for one size (microseconds, one way).
struct PerftestLatency {
  std::uint64_t bytes = 0;
  std::uint64_t iterations = 0;
  double min_us = 0;
  double max_us = 0;
  double typical_us = 0;  ///< perftest's median.
  double avg_us = 0;
  double p99_us = 0;
  double p999_us = 0;
};

/// What ib_write_bw printed for one size.
struct PerftestBandwidth {
  std::uint64_t bytes = 0;
  std::uint64_t iterations = 0;
  double peak_mib_per_s = 0;
  double average_mib_per_s = 0;  ///< perftest's "MB/sec" is 2^20 bytes per second.
};

/// The result line of ib_write_lat's output; nothing when it has none.
std::optional<PerftestLatency> parse_write_lat(std::string_view output);
/// The result line of ib_write_bw's output; nothing when it has none.
std::optional<PerftestBandwidth> parse_write_bw(std::string_view output);

/// The index of the RoCE v2 GID of `ipv4` in the device port's GID table
/// (sysfs), or nothing when the port has none.
std::optional<int> roce_v2_gid_index(const std::string& device, int port, const std::string& ipv4);

/// Runs ib_write_lat for `bytes` and `iterations`. Throws std::runtime_error
/// naming what failed (perftest missing, no GID, a side that failed, with its output).
PerftestLatency run_write_lat(const PerftestSetup& setup, std::uint64_t bytes, std::uint64_t iterations);
/// Runs ib_write_bw: `iterations` writes of `bytes`. Throws as run_write_lat().
PerftestBandwidth run_write_bw(const PerftestSetup& setup, std::uint64_t bytes, std::uint64_t iterations);

}  // namespace axon_bench
