// `axon-bench report A.json [B.json] -o FILE.html`: renders one result file
// as an HTML page, or compares two in one page.
#pragma once

#include "harness/command.hpp"

namespace axon_bench {

/// Registers `axon-bench report` and its options on `app`.
Command add_report_command(CLI::App& app);

}  // namespace axon_bench
