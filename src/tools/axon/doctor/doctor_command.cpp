// `axon doctor`: runs every check against this host and prints the checklist.
#include <cstdio>
#include <memory>
#include <string>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/doctor/check.hpp"
#include "src/tools/axon/doctor/doctor_report.hpp"

namespace axon::tools {
namespace {

class DoctorCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("doctor", "Check this host for real-time use, with the fix for each finding");
    sub->footer(
        "Checks /dev/shm, memlock, real-time priority, huge pages, transparent huge pages, swap, the CPU governor, "
        "isolated CPUs, irqbalance, the clock source, socket buffers and RDMA. Each is PASS, WARN, FAIL or SKIP "
        "(not applicable), with what was found and the command that fixes it. Limits and capabilities are this "
        "process's: run it as your programs run (same user, shell, systemd unit or container).\n\n"
        "Exit status: 0 when no check fails (warnings included), 1 when one fails, 2 on a usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    const auto results = doctor::run_checks(doctor::HostView::local());
    const std::string text = globals.json ? doctor::render_json(results) + "\n" : doctor::render_text(results);
    std::fputs(text.c_str(), out);
    return doctor::summarize(results).failed > 0 ? kExitFailed : kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_doctor_command() { return std::make_unique<DoctorCommand>(); }

}  // namespace axon::tools
