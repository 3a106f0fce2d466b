// The shape of an axon-bench subcommand: it registers its options on the
// application and hands back what runs it once the whole command line is
// parsed (so output options such as --json are known before it starts).
#pragma once

#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "results/result_log.hpp"

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's namespace
class App;
}

namespace axon_bench {

/// Where a command's results go: the human-readable tables to `text`
/// (stderr when the JSON goes to stdout), every measured case to `log`.
struct Output {
  std::FILE* text = stdout;
  ResultLog log;

  /// Appends each list of `cases` (std::vector<CaseResult>), in the order measured.
  template <class... CaseLists>
  void record(const CaseLists&... cases) {
    (log.cases.insert(log.cases.end(), cases.begin(), cases.end()), ...);
  }
  /// Prints the run's notes to `text`, one "note: ..." line each.
  void print_notes() const {
    for (const auto& note : log.run.notes) {
      std::fprintf(text, "note: %s\n", note.c_str());
    }
  }
  /// Adds `note` to the run's notes unless it is there already.
  void note_once(const std::string& note) {
    if (std::find(log.run.notes.begin(), log.run.notes.end(), note) == log.run.notes.end()) {
      log.run.notes.push_back(note);
    }
  }
};

/// Runs `measure` for one case of `command`; when it throws, prints "FAILED
/// <what>: <why>", adds "<command>: <what> failed: <why>" to the run's notes
/// and returns nothing, so the other cases still run.
template <class Measure>
auto attempt_case(Output& out, const std::string& command, const std::string& what, Measure measure)
    -> std::optional<decltype(measure())> {
  try {
    return measure();
  } catch (const std::exception& e) {
    std::fprintf(out.text, "FAILED %s: %s\n", what.c_str(), e.what());
    out.log.run.notes.push_back(command + ": " + what + " failed: " + e.what());
    return std::nullopt;
  }
}

/// A registered subcommand. `run` throws std::exception on failure.
struct Command {
  CLI::App* app = nullptr;
  std::function<void(Output& out)> run;
};

}  // namespace axon_bench
