// record_bench: what `axon record` sustains, next to a plain write loop to the same file system in the same run
// (issue 18; docs/performance.md, "Recording (issue 18)").
//
//   record_bench write DIR [MIB] [BLOCK_KIB]
//     The MCAP writer (src/tools/mcap) alone: BLOCK_KIB payloads (default 1024) until MIB (default 1024) are
//     written, uncompressed and lz4, next to a loop of write() calls of the same blocks; MB/s of payload and CPU
//     seconds, each case closed with fsync (as the writer closes).
//   record_bench record DIR AXON [PAYLOAD_KIB] [SECONDS] [COMPRESSION]
//     `axon record` (the program AXON) of one topic a child process publishes PAYLOAD_KIB messages on (default
//     1024) at rising rates for SECONDS each (default 3): the highest payload rate recorded without a loss, with the
//     recorder's CPU time, next to the plain write loop of the same blocks, alone and beside the same publisher
//     (publishing to nobody) at the rate that lost and at the best one.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "src/tools/mcap/writer.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double cpu_seconds(int who) {
  rusage usage{};
  ::getrusage(who, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

struct Figure {
  double mb_s = 0;
  double cpu_s = 0;
};

std::vector<std::uint8_t> payload_bytes(std::size_t size) {
  std::vector<std::uint8_t> block(size);
  std::uint32_t x = 12345;
  for (auto& b : block) {  // not all zero: lz4 has something to do, as with real sensor data it would have more
    x = x * 1664525U + 1013904223U;
    b = static_cast<std::uint8_t>((x >> 24) & 0x0F);
  }
  return block;
}

/// write() of `source` in blocks of `block_bytes`, going round it, until `total` bytes, then fsync and close. A
/// source of one block is `dd`'s case: the same bytes, hot in the cache, written again and again.
Figure plain_write(const std::string& path, const std::vector<std::uint8_t>& source, std::size_t block_bytes,
                   std::uint64_t total) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
  const double cpu0 = cpu_seconds(RUSAGE_SELF);
  const auto t0 = Clock::now();
  const std::size_t blocks = source.size() / block_bytes;
  for (std::uint64_t written = 0, k = 0; written < total; written += block_bytes, k = (k + 1) % blocks) {
    const std::uint8_t* const block = source.data() + (k * block_bytes);
    std::size_t done = 0;
    while (done < block_bytes) {
      const ssize_t n = ::write(fd, block + done, block_bytes - done);
      if (n <= 0) {
        std::perror("write");
        std::exit(1);
      }
      done += static_cast<std::size_t>(n);
    }
  }
  ::fsync(fd);
  ::close(fd);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  ::unlink(path.c_str());
  return {static_cast<double>(total) / 1e6 / seconds, cpu_seconds(RUSAGE_SELF) - cpu0};
}

Figure mcap_write(const std::string& path, const std::vector<std::uint8_t>& block, std::uint64_t total,
                  axon::mcap::Compression compression) {
  const double cpu0 = cpu_seconds(RUSAGE_SELF);
  const auto t0 = Clock::now();
  axon::mcap::WriterOptions options;
  options.compression = compression;
  options.chunk_messages = 64;  // as `axon record`
  auto writer = axon::mcap::Writer::create(path, options);
  if (!writer) {
    std::fprintf(stderr, "%s\n", std::string(writer.error().message()).c_str());
    std::exit(1);
  }
  auto channel = (*writer)->add_channel(0, "bench", "axon.raw");
  std::uint32_t sequence = 0;
  for (std::uint64_t written = 0; written < total; written += block.size()) {
    const axon::mcap::MessageHeader header{.channel_id = *channel, .sequence = ++sequence, .log_time = sequence};
    if (auto r = (*writer)->add_message(header, block); !r) {
      std::fprintf(stderr, "%s\n", std::string(r.error().message()).c_str());
      std::exit(1);
    }
  }
  if (auto r = (*writer)->close(); !r) {
    std::fprintf(stderr, "%s\n", std::string(r.error().message()).c_str());
    std::exit(1);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  ::unlink(path.c_str());
  return {static_cast<double>(total) / 1e6 / seconds, cpu_seconds(RUSAGE_SELF) - cpu0};
}

int write_command(const std::string& dir, std::uint64_t mib, std::size_t block_kib) {
  const auto block = payload_bytes(block_kib * 1024);
  const std::uint64_t total = mib << 20;
  const std::string path = dir + "/record_bench.bin";
  std::printf("%llu MiB of %zu KiB blocks to %s, 3 rounds (MB/s of payload, CPU s)\n",
              static_cast<unsigned long long>(mib), block_kib, dir.c_str());
  for (int round = 0; round < 3; ++round) {
    const Figure plain = plain_write(path, block, block.size(), total);
    const Figure none = mcap_write(path, block, total, axon::mcap::Compression::kNone);
    const Figure lz4 = mcap_write(path, block, total, axon::mcap::Compression::kLz4);
    std::printf(
        "round %d: plain write %7.0f MB/s %5.2f s | mcap none %7.0f MB/s %5.2f s (%3.0f %%) | mcap lz4 "
        "%7.0f MB/s %5.2f s\n",
        round, plain.mb_s, plain.cpu_s, none.mb_s, none.cpu_s, 100.0 * none.mb_s / plain.mb_s, lz4.mb_s, lz4.cpu_s);
    std::fflush(stdout);
  }
  return 0;
}

/// Whether the publisher waits for the recorder before it starts.
enum class Audience : std::uint8_t { kRecorder, kNobody };

/// Chunks of the publisher's payload class.
constexpr std::size_t kPublisherChunks = 320;

/// Set by SIGTERM in the publisher child: stop publishing, leave the domain.
volatile std::sig_atomic_t stop_publishing = 0;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

/// The publisher child: `payload` byte messages on "bench/record" at `rate` Hz for `seconds`, after the recorder
/// subscribed (kNobody: at once, every message dropped unread but written as always); leaves the domain as usual.
void publish(std::uint32_t domain, std::size_t payload, double rate, double seconds, Audience audience) {
  (void)std::signal(SIGTERM, [](int) { stop_publishing = 1; });
  axon::NodeOptions options;
  options.domain_id = domain;
  options.chunk_classes = {{.payload_bytes = 256, .count = 64},
                           {.payload_bytes = static_cast<std::uint32_t>(payload), .count = kPublisherChunks}};
  auto node = axon::Node::create("record-bench-publisher", options);
  if (!node) {
    std::fprintf(stderr, "publisher: %s\n", std::string(node.error().message()).c_str());
    return;
  }
  auto publisher = (*node)->advertise<axon::Bytes>("bench/record");
  if (!publisher) {
    std::fprintf(stderr, "publisher: %s\n", std::string(publisher.error().message()).c_str());
    return;
  }
  while (audience == Audience::kRecorder && (*publisher)->subscriber_count() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto block = payload_bytes(payload);
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  auto next = Clock::now();
  std::uint64_t exhausted = 0;
  while (next < end && stop_publishing == 0) {
    if (auto loan = (*publisher)->loan(payload)) {
      axon::Loan<axon::Bytes>& bytes = *loan;
      std::memcpy(bytes.elements().data(), block.data(), payload);
      (void)(*publisher)->publish(std::move(bytes));
    } else {
      ++exhausted;
    }
    next += period;
    std::this_thread::sleep_until(next);
  }
  if (exhausted > 0) {
    std::fprintf(stderr, "publisher: %llu loans found the pool exhausted\n",
                 static_cast<unsigned long long>(exhausted));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the recorder drains before the pool goes
}

std::uint64_t json_number(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":");
  return at == std::string::npos ? 0 : std::strtoull(json.c_str() + at + key.size() + 3, nullptr, 10);
}

/// The plain write loop (1 GiB) while a publisher process publishes `mb_s` of `payload` byte messages to nobody:
/// the loop on what the recorder has (the disk, the cores the publisher leaves), not on the whole machine. Its
/// source is as many blocks as the publisher's pool has chunks, gone round in turn: like the recorder's, bytes not
/// hot in this core's cache (the recorder's were just written by the publisher's core).
Figure plain_write_beside_publisher(const std::string& dir, std::size_t payload, double mb_s, std::uint32_t domain) {
  std::vector<std::uint8_t> source;
  source.reserve(payload * kPublisherChunks);
  const std::vector<std::uint8_t> block = payload_bytes(payload);
  for (std::size_t k = 0; k < kPublisherChunks; ++k) {
    source.insert(source.end(), block.begin(), block.end());
  }
  const double rate = mb_s * 1e6 / static_cast<double>(payload);
  constexpr double kPublisherSeconds = 30;  // more than the loop takes at any speed a disk here has
  const pid_t publisher = ::fork();
  if (publisher == 0) {
    publish(domain, payload, rate, kPublisherSeconds, Audience::kNobody);
    std::_Exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // its node made, publishing at its rate
  const Figure plain = plain_write(dir + "/record_bench.bin", source, payload, std::uint64_t{1} << 30);
  ::kill(publisher, SIGTERM);  // it stops publishing and leaves the domain
  int status = 0;
  ::waitpid(publisher, &status, 0);
  return plain;
}

int record_command(const std::string& dir, const std::string& axon, std::size_t payload_kib, double seconds,
                   const std::string& compression) {
  const std::size_t payload = payload_kib * 1024;
  const std::string file = dir + "/record_bench.mcap";
  const auto domain = static_cast<std::uint32_t>(200 + ::getpid() % 50);
  const Figure plain = plain_write(dir + "/record_bench.bin", payload_bytes(payload), payload, std::uint64_t{1} << 30);
  std::printf("plain write loop, %zu KiB blocks, 1 GiB to %s: %.0f MB/s (%.2f CPU s)\n", payload_kib, dir.c_str(),
              plain.mb_s, plain.cpu_s);
  double best = 0;
  double failed = 0;  ///< The first rate with a loss.
  for (double mb_s = 100; mb_s <= 3000; mb_s *= 1.25) {
    const double rate = mb_s * 1e6 / static_cast<double>(payload);
    const pid_t publisher = ::fork();
    if (publisher == 0) {
      publish(domain, payload, rate, seconds, Audience::kRecorder);
      std::_Exit(0);  // the child: none of the parent's exit handlers
    }
    const std::string out = dir + "/record_bench.json";
    std::vector<std::string> args = {axon,     "--domain",      std::to_string(domain),
                                     "record", "bench/record",  "--output",
                                     file,     "--compression", compression,
                                     "--json", "--duration",    std::to_string(seconds + 2.0)};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv;
    for (auto& a : args) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    pid_t recorder = -1;
    if (posix_spawn(&recorder, axon.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
      std::perror("posix_spawn");
      return 1;
    }
    posix_spawn_file_actions_destroy(&actions);
    int status = 0;
    ::waitpid(publisher, &status, 0);
    rusage usage{};
    ::wait4(recorder, &status, 0, &usage);
    const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    std::string json;
    if (FILE* f = std::fopen(out.c_str(), "r")) {
      char buffer[4096];
      std::size_t n = 0;
      while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) {
        json.append(buffer, n);
      }
      std::fclose(f);
    }
    const std::uint64_t lost = json_number(json, "lost");
    const std::uint64_t bytes = json_number(json, "payload_bytes");
    const double expected = rate * seconds;
    const double messages = static_cast<double>(bytes) / static_cast<double>(payload);
    std::printf(
        "offered %6.0f MB/s (%6.0f msg/s): recorded %6.0f of ~%6.0f messages, %llu lost, recorder CPU "
        "%.2f s (%.0f %% of %.0f s)\n",
        mb_s, rate, messages, expected, static_cast<unsigned long long>(lost), cpu, 100.0 * cpu / (seconds + 2.0),
        seconds + 2.0);
    std::fflush(stdout);
    ::unlink(file.c_str());
    if (lost > 0 || messages < expected * 0.97) {
      failed = mb_s;
      break;
    }
    best = mb_s;
  }
  std::printf("sustained without loss (%s): %.0f MB/s, %.0f %% of the plain write loop (%.0f MB/s)\n",
              compression.c_str(), best, 100.0 * best / plain.mb_s, plain.mb_s);
  // The loop alone has both cores; the recorder shares them with the publisher, whose writing of each payload is a
  // core's work at these rates. So also: the loop beside the same publisher at the rate that failed (did a plain
  // loop keep up where the recorder did not?) and at the best one.
  for (const double mb_s : {failed, best}) {
    if (mb_s > 0) {
      const Figure beside = plain_write_beside_publisher(dir, payload, mb_s, domain);
      std::printf(
          "plain write loop beside the publisher at %.0f MB/s: %.0f MB/s (%.2f CPU s); the recorder "
          "sustained %.0f MB/s, %.0f %% of it\n",
          mb_s, beside.mb_s, beside.cpu_s, best, 100.0 * best / beside.mb_s);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 2 && args[0] == "write") {
    return write_command(args[1], args.size() > 2 ? std::stoull(args[2]) : 1024,
                         args.size() > 3 ? std::stoul(args[3]) : 1024);
  }
  if (args.size() >= 3 && args[0] == "record") {
    return record_command(args[1], args[2], args.size() > 3 ? std::stoul(args[3]) : 1024,
                          args.size() > 4 ? std::stod(args[4]) : 3.0, args.size() > 5 ? args[5] : "none");
  }
  std::fprintf(stderr,
               "usage: record_bench write DIR [MIB] [BLOCK_KIB]\n"
               "       record_bench record DIR AXON [PAYLOAD_KIB] [SECONDS] [none|lz4|zstd]\n");
  return 2;
}
