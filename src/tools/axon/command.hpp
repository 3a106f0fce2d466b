// What an axon subcommand implements. main.cpp makes one of each (commands.hpp) and registers it, so a new
// command is one new file plus one line there.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>

#include "src/tools/axon/global_options.hpp"

namespace axon::tools {

/// Exit statuses shared by every command (each command's --help says which it uses).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  ///< The command ran and found a failure (a FAIL check, a dead peer ...).
inline constexpr int kExitUsage = 2;   ///< The command line was wrong (CLI11's message says how).

class Command {
 public:
  Command() = default;
  virtual ~Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;
  Command(Command&&) = delete;
  Command& operator=(Command&&) = delete;

  /// Adds this command to `app` as a subcommand, with its description, options and --help, and returns it;
  /// the options are bound to members of this object, which main() keeps alive until run().
  virtual CLI::App& add_to(CLI::App& app) = 0;
  /// Runs the command once the command line parsed and named it; prints to `out` (text, or one JSON document
  /// when globals.json) and returns the process's exit status.
  [[nodiscard]] virtual int run(const GlobalOptions& globals, std::FILE* out) = 0;
};

}  // namespace axon::tools
