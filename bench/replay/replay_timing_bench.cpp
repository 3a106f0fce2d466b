// The replay's timing error (issue 18; docs/performance.md, "Replay timing (issue 18)"): writes a synthetic MCAP
// file as `axon record` writes one (a 1 kHz and a 10 Hz raw topic mixed, --seconds long), subscribes to both in
// this process (a blocking WaitSet, as an application would), runs `axon play --json` on it and reports, per
// message, the percentiles of
//   - receive time - intended time, intended = play's start + (log time - first log time) / rate (from play's
//     --json: its clock's base, CLOCK_MONOTONIC like the receive stamps), and
//   - publish time - deadline, as play measured it (its --json timing), next to
//   - the clock's floor: the same deadlines (the file's log times) waited for in this process by the same
//     sleep-then-spin (ReplayClock::wait_until) with nothing to publish: what the machine's scheduling alone
//     costs a timed wait. On a shared VM its p99 alone swings from microseconds to milliseconds between runs, so
//     play is judged against the floor measured in the same run, alternating (--rounds).
// --recording PATH replays an existing file instead (the urban scenario's, say): no subscriber then, only play's
// own figures and the floor.
// --spin runs `axon play --spin` and waits for the floor's deadlines the same way (spinning for whole gaps).
// Usage: replay_timing_bench [--seconds 10] [--rate 1] [--domain 77] [--axon PATH] [--file PATH]
//                            [--recording PATH] [--rounds N] [--spin]
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "src/tools/axon/play/replay_clock.hpp"
#include "src/tools/mcap/reader.hpp"
#include "src/tools/mcap/writer.hpp"

extern char** environ;

namespace {

struct Tick {
  static constexpr std::string_view kAxonTypeName = "axon.bench.ReplayTick";
  std::uint64_t log_time_ns;
  std::uint64_t sequence;
};

constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kT0 = 1'780'000'000'000'000'000ULL;

std::int64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

/// The recorder's channel for a Tick topic (docs/design/replay.md, "Channels").
std::uint16_t add_tick_channel(axon::mcap::Writer& writer, std::uint16_t schema, const std::string& topic) {
  const axon::TypeIdentity type = axon::type_identity_of<Tick>();
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016" PRIx64, type.hash);
  auto id = writer.add_channel(schema, topic, "axon.raw",
                               {{"axon.type_name", type.name},
                                {"axon.type_hash", hash},
                                {"axon.serializer", "raw"},
                                {"axon.type_size", std::to_string(type.size)},
                                {"axon.type_align", std::to_string(type.align)},
                                {"axon.type_version", "0"},
                                {"axon.max_payload_bytes", std::to_string(type.size)}});
  return id ? *id : 0;
}

bool write_file(const std::string& path, double seconds, std::uint64_t& messages) {
  auto writer = axon::mcap::Writer::create(path);
  if (!writer) {
    std::fprintf(stderr, "%s\n", std::string(writer.error().message()).c_str());
    return false;
  }
  auto schema = (*writer)->add_schema(std::string(Tick::kAxonTypeName), "axon.raw", {});
  const std::uint16_t fast = add_tick_channel(**writer, *schema, "bench/replay_1khz");
  const std::uint16_t slow = add_tick_channel(**writer, *schema, "bench/replay_10hz");
  const auto total_ms = static_cast<std::uint64_t>(seconds * 1000);
  std::uint32_t sequence = 0;
  for (std::uint64_t ms = 0; ms < total_ms; ++ms) {
    for (int which = 0; which < 2; ++which) {
      if (which == 1 && ms % 100 != 0) {
        continue;
      }
      // The 10 Hz messages fall 0.4 ms after a 1 kHz one: gaps of 0.4 and 0.6 ms mixed in.
      const std::uint64_t log = kT0 + ms * kMs + (which == 1 ? 400'000 : 0);
      const Tick tick{.log_time_ns = log, .sequence = ++sequence};
      const axon::mcap::MessageHeader header{
          .channel_id = which == 0 ? fast : slow, .sequence = sequence, .log_time = log, .publish_time = log};
      if (!(*writer)->add_message(header, {reinterpret_cast<const std::uint8_t*>(&tick), sizeof(tick)})) {
        return false;
      }
      ++messages;
    }
  }
  return static_cast<bool>((*writer)->close());
}

void print_percentiles(const char* what, std::vector<std::int64_t> values) {
  if (values.empty()) {
    std::printf("%-36s no samples\n", what);
    return;
  }
  std::sort(values.begin(), values.end());
  const auto at = [&](double p) {
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size())));
    return static_cast<double>(values[std::clamp<std::size_t>(rank, 1, values.size()) - 1]) / 1000.0;
  };
  std::printf("%-36s p50 %8.1f us  p99 %8.1f us  p99.9 %8.1f us  max %8.1f us  (n=%zu)\n", what, at(0.5), at(0.99),
              at(0.999), static_cast<double>(values.back()) / 1000.0, values.size());
}

/// Every message's log time in `path`, in log-time order (what play's deadlines come from).
std::vector<std::uint64_t> log_times_of(const std::string& path) {
  std::vector<std::uint64_t> times;
  auto reader = axon::mcap::Reader::open(path);
  if (!reader) {
    std::fprintf(stderr, "%s\n", std::string(reader.error().message()).c_str());
    return times;
  }
  auto cursor = (*reader)->messages();
  axon::mcap::Message message;
  for (auto more = cursor.next(message); more && *more; more = cursor.next(message)) {
    times.push_back(message.header.log_time);
  }
  return times;
}

/// The clock's floor: each deadline waited for as play waits (ReplayClock::wait_until), nothing published; the
/// lateness of each wake-up (clock read after the wait - deadline).
std::vector<std::int64_t> clock_floor(const std::vector<std::uint64_t>& log_times, double rate,
                                      axon::tools::ReplayWait wait) {
  std::vector<std::int64_t> lateness;
  lateness.reserve(log_times.size());
  if (log_times.empty()) {
    return lateness;
  }
  axon::tools::ReplayClock clock(rate, wait);
  clock.rebase(axon::tools::monotonic_now_ns(), log_times.front());
  for (const std::uint64_t log : log_times) {
    const std::int64_t deadline = clock.deadline_ns(log);
    (void)clock.wait_until(deadline, [] { return false; });
    lateness.push_back(axon::tools::monotonic_now_ns() - deadline);
  }
  return lateness;
}

/// `axon play FILE --rate R --json` run to its end; its stdout (empty when it could not start).
std::string run_play(const std::string& axon_path, std::uint32_t domain, const std::string& file,
                     const std::string& rate, axon::tools::ReplayWait wait) {
  int out[2];
  if (::pipe(out) != 0) {
    return {};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<std::string> args = {axon_path, "--domain", std::to_string(domain), "play", file, "--rate",
                                   rate,      "--json"};
  if (wait == axon::tools::ReplayWait::kSpin) {
    args.emplace_back("--spin");
  }
  std::vector<char*> argv_c;
  for (auto& a : args) {
    argv_c.push_back(a.data());
  }
  argv_c.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, axon_path.c_str(), &actions, nullptr, argv_c.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  std::string json;
  if (spawned != 0) {
    std::fprintf(stderr, "cannot run %s\n", axon_path.c_str());
  } else {
    char buffer[4096];
    for (ssize_t got; (got = ::read(out[0], buffer, sizeof(buffer))) > 0;) {
      json.append(buffer, static_cast<std::size_t>(got));
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "axon play failed (status %d):\n%s\n", status, json.c_str());
      json.clear();
    }
  }
  ::close(out[0]);
  return json;
}

/// Play's own timing figures from its --json; false (said on stderr) when there are none.
bool print_play_timing(const char* what, const std::string& json) {
  try {
    const YAML::Node timing = YAML::Load(json)["timing"];
    if (!timing.IsMap()) {
      std::fprintf(stderr, "axon play reported no timing:\n%s\n", json.c_str());
      return false;
    }
    std::printf("%-36s p50 %8.1f us  p99 %8.1f us  p99.9 %8.1f us  max %8.1f us  (n=%s)\n", what,
                timing["p50_ns"].as<double>() / 1000.0, timing["p99_ns"].as<double>() / 1000.0,
                (timing["p999_ns"] ? timing["p999_ns"].as<double>() / 1000.0 : NAN),
                timing["max_ns"].as<double>() / 1000.0, timing["samples"].as<std::string>().c_str());
    return true;
  } catch (const YAML::Exception& error) {
    std::fprintf(stderr, "axon play printed no JSON (%s):\n%s\n", error.what(), json.c_str());
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("replay_timing_bench: axon play's timing error on a synthetic 1 kHz + 10 Hz recording");
  double seconds = 10;
  std::string rate = "1";
  std::uint32_t domain = 77;
  std::string axon_path = AXON_CLI;
  std::string path = "/tmp/axon_replay_timing_" + std::to_string(::getpid()) + ".mcap";
  app.add_option("--seconds", seconds, "Length of the recording");
  app.add_option("--rate", rate, "axon play --rate");
  app.add_option("--domain", domain, "Domain to replay into");
  app.add_option("--axon", axon_path, "The axon command");
  app.add_option("--file", path, "Where to write the recording");
  std::string recording;
  app.add_option("--recording", recording, "Replay this file instead of a synthetic one (no subscriber then)");
  int rounds = 1;
  app.add_option("--rounds", rounds, "Rounds of the clock floor then play, alternating")->check(CLI::Range(1, 100));
  bool spin = false;
  app.add_flag("--spin", spin, "axon play --spin, and the floor spins for whole gaps too");
  CLI11_PARSE(app, argc, argv);
  const axon::tools::ReplayWait wait = spin ? axon::tools::ReplayWait::kSpin : axon::tools::ReplayWait::kSleepThenSpin;
  if (rounds > 1 && recording.empty()) {
    std::fprintf(stderr, "--rounds repeats the replay of a --recording; the synthetic run is one round\n");
    return 2;
  }

  const double rate_value = rate == "max" ? 1.0 : std::stod(rate);
  if (!recording.empty()) {
    const std::vector<std::uint64_t> log_times = log_times_of(recording);
    std::printf("recording %s: %zu messages, rate %s\n", recording.c_str(), log_times.size(), rate.c_str());
    for (int round = 1; round <= rounds; ++round) {
      print_percentiles(("round " + std::to_string(round) + " clock floor").c_str(),
                        clock_floor(log_times, rate_value, wait));
      const std::string json = run_play(axon_path, domain, recording, rate, wait);
      if (!print_play_timing(("round " + std::to_string(round) + " play: publish - deadline").c_str(), json)) {
        return 1;
      }
    }
    return 0;
  }

  std::uint64_t messages = 0;
  if (!write_file(path, seconds, messages)) {
    std::fprintf(stderr, "could not write %s\n", path.c_str());
    return 1;
  }
  axon::NodeOptions node_options;
  node_options.domain_id = domain;
  auto node = axon::Node::create("replay_timing_bench", node_options);
  if (!node) {
    std::fprintf(stderr, "%s\n", std::string(node.error().message()).c_str());
    return 1;
  }
  axon::WaitSet waits;
  std::vector<std::shared_ptr<axon::Subscriber<Tick>>> subs;
  for (const char* topic : {"bench/replay_1khz", "bench/replay_10hz"}) {
    auto sub = (*node)->subscribe<Tick>(topic, axon::SubscriberQos{.depth = 256});
    if (!sub) {
      std::fprintf(stderr, "cannot subscribe %s: %s\n", topic, std::string(sub.error().message()).c_str());
      return 1;
    }
    if (auto attached = waits.attach(*sub); !attached) {
      std::fprintf(stderr, "cannot wait for %s: %s\n", topic, std::string(attached.error().message()).c_str());
      return 1;
    }
    subs.push_back(*sub);
  }
  // (log time, receive time) per message, stored before anything is computed.
  std::vector<std::pair<std::uint64_t, std::int64_t>> received;
  received.reserve(messages);
  std::atomic<bool> done{false};  // relaxed: only "stop soon" for the receiving thread
  std::thread receiver([&] {
    while (!done.load(std::memory_order_relaxed)) {
      auto ready = waits.wait(std::chrono::milliseconds(100));
      if (!ready) {
        continue;
      }
      for (const auto& sub : subs) {
        while (auto sample = sub->take()) {
          received.emplace_back((*sample)->log_time_ns, now_ns());
        }
      }
    }
  });

  const std::vector<std::int64_t> floor = clock_floor(log_times_of(path), rate_value, wait);
  const std::string json = run_play(axon_path, domain, path, rate, wait);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the last deliveries
  done.store(true, std::memory_order_relaxed);
  receiver.join();
  ::unlink(path.c_str());

  YAML::Node doc;
  try {
    doc = YAML::Load(json);
  } catch (const YAML::Exception& error) {
    std::fprintf(stderr, "axon play printed no JSON (%s):\n%s\n", error.what(), json.c_str());
    return 1;
  }
  const YAML::Node timing = doc["timing"];
  if (!timing.IsMap()) {
    std::fprintf(stderr, "axon play reported no timing:\n%s\n", json.c_str());
    return 1;
  }
  const auto start_ns = timing["start_ns"].as<std::int64_t>();
  const auto first_log = timing["first_log_time_ns"].as<std::uint64_t>();
  std::vector<std::int64_t> receive_errors;
  receive_errors.reserve(received.size());
  for (const auto& [log, at] : received) {
    const auto intended =
        start_ns + static_cast<std::int64_t>(std::llround(static_cast<double>(log - first_log) / rate_value));
    receive_errors.push_back(at - intended);
  }
  std::printf("recording: %.1f s, %" PRIu64 " messages (1 kHz + 10 Hz), rate %s; received %zu, play published %s\n",
              seconds, messages, rate.c_str(), received.size(), doc["published"].as<std::string>().c_str());
  print_percentiles("receive time - intended time", receive_errors);
  print_percentiles("clock floor (same deadlines, no work)", floor);
  return print_play_timing("publish time - deadline (play's own)", json) ? 0 : 1;
}
