// `axon clean`: removes what dead processes left of a domain, refusing while a node of it lives.
#include <fmt/format.h>

#include <memory>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/graph/domain_text.hpp"

namespace axon::tools {
namespace {

class CleanCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("clean", "Remove what dead processes left of a domain in the shm directory");
    sub->footer(
        "Removes axon_d<N>.lock and every axon_d<N>_* file of the domain (--domain, AXON_DOMAIN; directory "
        "AXON_SHM_DIR, else /dev/shm) under the domain lock, and refuses, naming the live nodes, while any process "
        "of the domain runs. Exit status: 0 (also when there was nothing to remove), 1 when refused or a file "
        "could not be removed, 2 on a usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    auto report = clean_domain(DomainAddress{.domain_id = globals.domain_id, .shm_dir = {}});
    if (!report) {
      return report_error(report.error());
    }
    if (globals.json) {
      JsonWriter json;
      json.begin_object().member("domain", globals.domain_id).member("shm_dir", report->address.shm_dir);
      json.key("removed").begin_array();
      for (const std::string& path : report->removed) {
        json.value(path);
      }
      json.end_array().end_object();
      print(out, json.text() + "\n");
      return kExitOk;
    }
    if (report->removed.empty()) {
      print(out, fmt::format("nothing of domain {} in {}\n", globals.domain_id, report->address.shm_dir));
      return kExitOk;
    }
    for (const std::string& path : report->removed) {
      print(out, fmt::format("removed {}\n", path));
    }
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_clean_command() { return std::make_unique<CleanCommand>(); }

}  // namespace axon::tools
