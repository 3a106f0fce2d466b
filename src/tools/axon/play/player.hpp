// The replay itself (docs/design/replay.md): opens the files, turns each channel into a publisher of its
// recorded type (replay_channels.hpp), then publishes the merged messages (merged_messages.hpp) at their
// deadlines (replay_clock.hpp), reacting to keys (key_input.hpp) and to Ctrl-C.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "axon/node.hpp"
#include "src/tools/axon/play/key_input.hpp"
#include "src/tools/axon/play/merged_messages.hpp"
#include "src/tools/axon/play/play_options.hpp"
#include "src/tools/axon/play/play_report.hpp"
#include "src/tools/axon/play/prepared_messages.hpp"
#include "src/tools/axon/play/replay_clock.hpp"
#include "src/tools/axon/play/replay_pool.hpp"
#include "src/tools/mcap/reader.hpp"

namespace axon::tools {

/// Thread safety: none (one thread runs a replay). Allocates while it sets up; while it replays, only when a
/// channel appears that the file's summary did not list, and for the timing samples beyond those reserved.
class Player {
 public:
  Player(const PlayOptions& options, PlayReport& report) : options_(options), report_(report) {}

  /// Opens every file (a file that cannot be read is an error naming it and why).
  [[nodiscard]] Result<void> open_files();
  /// Channels in all the files' summaries, for the node's publisher count.
  [[nodiscard]] std::size_t channel_count() const;
  /// What each channel to replay needs of the pool: its largest payload and recorded rate (replay_pool.hpp).
  [[nodiscard]] std::vector<ReplayDemand> pool_demands() const;
  /// Resolves every channel the files list (publishers made, skips recorded), then replays; an error for a
  /// failure that stops the replay (a corrupt chunk stops nothing: it is a problem in the report).
  [[nodiscard]] Result<void> run(Node& node, KeyInput& keys);

 private:
  static constexpr int kSkipped = -1;   // channel not replayed (reason in the report)
  static constexpr int kFiltered = -2;  // channel left out by --topics
  struct Output {
    std::shared_ptr<Publisher<Bytes>> publisher;
    std::uint64_t hash = 0;
    std::size_t max_payload_bytes = 0;  // the recorded type's largest message
    std::size_t report_index = 0;       // in report_.topics
    std::string from_file;
    bool told_too_large = false;
  };

  /// The output index of channel `channel_id` of file `file` (kSkipped, kFiltered), resolving it on first use.
  int output_of(Node& node, std::size_t file, std::uint16_t channel_id);
  int resolve(Node& node, std::size_t file, const mcap::Channel& channel);
  /// Writes every chunk of the pool that the outputs' messages can take once, before the clock starts: on a VM
  /// a page's first write costs microseconds even after it was prefaulted, and a 2 MiB chunk's first copy was
  /// then 3 ms late.
  void warm_pool();
  /// Waits --delay seconds; false when a signal stopped it.
  [[nodiscard]] bool wait_delay() const;
  /// Messages copied into their chunks ahead of the one play waits for, at most.
  static constexpr std::size_t kMaxPrepared = 16;
  /// One pass over the files: the merged messages, the next one to prepare, the window, the prepared ones.
  struct Pass {
    explicit Pass(const std::vector<std::unique_ptr<mcap::Reader>>& readers, std::size_t read_ahead_chunks)
        : merged(readers, read_ahead_chunks) {}
    MergedMessages merged;
    /// Read and in the window, not prepared yet (when has_next); its payload is valid until the next read.
    FileMessage next;
    int next_output = 0;  ///< The output `next` goes to.
    bool has_next = false;
    bool ended = false;  ///< No message after `next` is in the window.
    bool window_set = false;
    std::uint64_t window_start = 0;
    std::uint64_t window_end = 0;
    bool based = false;  ///< The clock has its base for this pass.
    PreparedMessages<kMaxPrepared> prepared;
  };
  enum class Prepared : std::uint8_t {
    kReady,       ///< The payload is in the loan.
    kSkipped,     ///< Counted and said (too large, or no chunk within a second).
    kNoChunkYet,  ///< Without waiting: every chunk it could take is held (some by prepared messages).
  };
  enum class ChunkWait : std::uint8_t { kUpToASecond, kNone };

  /// One pass over the files; false when a signal stopped it.
  [[nodiscard]] bool play_once(Node& node, KeyInput& keys, ReplayClock& clock);
  /// Reads the pass's next message to replay into `pass.next` (kept there until it is prepared): false at the
  /// end of the window or of the files.
  bool read_next(Node& node, Pass& pass);
  /// Before play waits for the front's deadline (std::nullopt: untimed, paused or not --spin): prepares the messages
  /// due within kPrepareHorizonNs after it whose copy leaves the front on time, without waiting for a chunk; reads the
  /// next message in any case.
  void prepare_ahead(Node& node, Pass& pass, const ReplayClock& clock, std::optional<std::int64_t> front_deadline_ns);
  /// Waits while paused: true to publish the message now (step, or resumed: `clock` rebased to it), false to
  /// stop.
  [[nodiscard]] bool wait_paused(KeyInput& keys, ReplayClock& clock, std::uint64_t log_time_ns, bool& stepped);
  /// `payload` copied into a chunk of `output` (`loan`), the message skipped (counted, and said once per topic),
  /// or with ChunkWait::kNone no chunk free now.
  Prepared prepare(Output& output, mcap::Bytes payload, ChunkWait wait, std::optional<Loan<Bytes>>& loan);
  /// How long copying `bytes` is expected to take, from the copies so far.
  [[nodiscard]] std::int64_t expected_copy_ns(std::size_t bytes) const;
  /// Publishes a prepared message; `timed`: its publish time against `deadline_ns` goes into the timing.
  void publish(Output& output, Loan<Bytes> loan, std::int64_t deadline_ns, bool timed);
  [[nodiscard]] std::string published_name(const std::string& recorded) const;

  const PlayOptions& options_;
  PlayReport& report_;
  std::vector<std::unique_ptr<mcap::Reader>> readers_;
  std::vector<std::map<std::uint16_t, int>> channels_;  // per file: channel id -> output index or kSkipped/kFiltered
  std::vector<Output> outputs_;
  std::map<std::string, std::size_t> output_by_topic_;
  TimingStats timing_;
  bool paused_ = false;
  bool first_base_set_ = false;
  double copy_ns_per_byte_ = 0.5;  ///< Of large copies, smoothed; starts at 2 GB/s (below this VM's ~7).
};

}  // namespace axon::tools
