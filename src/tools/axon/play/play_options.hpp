// What `axon play` was asked to do (docs/tools.md, "axon play"): the command line, parsed.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace axon::tools {

struct PlayOptions {
  std::vector<std::string> files;
  /// Playback speed: 1 the recorded timing, 2 twice as fast; std::nullopt: as fast as publishing allows (max).
  std::optional<double> rate = 1.0;
  double start_offset_s = 0;        ///< Skip the messages of the first this many seconds of the recording.
  double duration_s = 0;            ///< > 0: only the messages of this many seconds from the start (offset).
  bool loop = false;                ///< Replay again from the start until Ctrl-C.
  std::vector<std::string> topics;  ///< Empty: all; else only these (recorded names).
  std::vector<std::pair<std::string, std::string>> remaps;  ///< Recorded name -> published name.
  bool paused = false;                                      ///< Start paused (keys: space, s).
  /// Seconds between making the publishers and the first message: subscribers that join a topic once it
  /// appears (a recorder, `axon topic echo`) are in place before the replay starts.
  double delay_s = 0;
  /// Spin on the clock for whole gaps instead of sleeping until shortly before each deadline (ReplayWait::kSpin):
  /// a core busy for the replay, for timing on machines whose timers wake sleepers late.
  bool spin = false;
};

}  // namespace axon::tools
