// The command-line pieces the axon-bench subcommands share: the subcommand
// itself with its footer, a list of CPUs for a pair of processes, and a
// list of sizes with units.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace axon_bench {

/// Registers subcommand `name`, whose results the output options of
/// axon-bench (--json, --report, --quiet) write.
inline CLI::App* add_measuring_command(CLI::App& app, const std::string& name, const std::string& description) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->footer("Also: --json FILE, --report FILE.html, --quiet (see axon-bench --help).\n");
  return cmd;
}

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
