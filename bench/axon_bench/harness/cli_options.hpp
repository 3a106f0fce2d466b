// The command-line pieces the axon-bench subcommands share: the subcommand
// itself with its footer, a list of CPUs for a pair of
// processes, a list of sizes with units, and options that show their default.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace axon_bench {

/// Registers subcommand `name`, whose results the output options of
/// axon-bench (--json, --report, --quiet) write. Without `description`
/// here, the command sets it later (cmd->description(...)).
inline CLI::App* add_measuring_command(CLI::App& app, const std::string& name, const std::string& description = {}) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->footer("Also: --json FILE, --report FILE.html, --quiet (see axon-bench --help).\n");
  return cmd;
}

/// Option `name` that shows its default in --help and accepts only what
/// `check` passes (CLI::PositiveNumber, CLI::IsMember({...}), ...).
template <class T>
CLI::Option* add_checked_option(CLI::App& cmd, const std::string& name, T& value, const std::string& help,
                                const CLI::Validator& check) {
  return cmd.add_option(name, value, help)->check(check)->capture_default_str();
}

/// --cpus help for a pair of processes: `first` names the side given first.
inline std::string cpu_pair_help(const std::string& first) {
  return "The two CPUs of the two processes (" + first +
         " first), e.g. 0,1 (default: 0,1 when the host has 2+ CPUs, else not pinned; -1 leaves a side unpinned)";
}

/// --sizes help for the payload sizes of a measured case.
inline constexpr const char* kPayloadSizesHelp =
    "Payload sizes, comma-separated, powers of two from 16 B to 16 MiB with optional unit (64,2KiB,1MiB)";

/// --cpus: the two CPUs of the two processes of a pair (see choose_cpu_pair()).
inline CLI::Option* add_cpu_pair_option(CLI::App& cmd, std::vector<int>& cpus, const std::string& help) {
  return cmd.add_option("--cpus", cpus, help)->delimiter(',')->expected(2);
}

/// A comma-separated list of sizes with optional units (64,2KiB,1MiB).
inline CLI::Option* add_size_list_option(CLI::App& cmd, const std::string& name, std::vector<std::uint64_t>& sizes,
                                         const std::string& help) {
  return cmd.add_option(name, sizes, help)->delimiter(',')->transform(CLI::AsSizeValue(false))->capture_default_str();
}

}  // namespace axon_bench
