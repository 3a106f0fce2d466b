#include "report/report_command.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "results/html_report.hpp"
#include "results/json_input.hpp"

namespace axon_bench {
namespace {

struct ReportOptions {
  std::vector<std::string> inputs;
  std::string output;
};

void run_report_command(const ReportOptions& options, Output& out) {
  std::vector<ReportInput> inputs;
  for (const auto& path : options.inputs) {
    inputs.push_back({std::filesystem::path(path).filename().string(), read_results_json(path)});
  }
  if (inputs.size() == 2 && inputs[0].name == inputs[1].name) {
    inputs[0].name = options.inputs[0];
    inputs[1].name = options.inputs[1];
  }
  if (const std::string error = write_html_report(inputs, options.output); !error.empty()) {
    throw std::runtime_error(error);
  }
  std::size_t cases = 0;
  for (const auto& input : inputs) {
    cases += input.log.cases.size();
  }
  std::fprintf(out.text, "wrote %s (%zu result file%s, %zu cases)\n", options.output.c_str(), inputs.size(),
               inputs.size() == 1 ? "" : "s", cases);
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Render result files written with --json as a self-contained HTML page (tables, a latency histogram and a "
      "CDF per case, inline SVG, nothing loaded from the network). Given two files, compare them: both in each "
      "plot (legend A/B) and in the tables with a B/A ratio row.");
  cmd->add_option("results", options->inputs, "One or two JSON result files (A, then B)")
      ->required()
      ->expected(1, 2)
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", options->output, "The HTML file to write")->required()->type_name("FILE.html");
  return {cmd, [options](Output& out) { run_report_command(*options, out); }};
}

}  // namespace axon_bench
