// `axon info FILE...`: what an MCAP file holds, like `mcap info` (file_info.hpp, info_output.hpp).
#include <memory>
#include <string>
#include <vector>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/graph/domain_text.hpp"
#include "src/tools/axon/info/file_info.hpp"
#include "src/tools/axon/info/info_output.hpp"

namespace axon::tools {
namespace {

class InfoCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "info", "What MCAP files hold: duration, messages per topic, schemas, compression, axon types");
    sub->add_option("files", files_, "MCAP files (written by axon record or any MCAP writer)")->required();
    sub->footer(
        "A file whose recorder was killed has no summary: it is described from its data section's complete "
        "chunks, and `axon record --recover FILE` rebuilds its summary. Exit status: 0 when every file was "
        "described, 1 when one could not be opened or is no MCAP file (the others are still described), 2 on a "
        "usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    int status = kExitOk;
    JsonWriter json;
    json.begin_object().key("files").begin_array();
    for (std::size_t i = 0; i < files_.size(); ++i) {
      auto info = read_file_info(files_[i]);
      if (!info.ok()) {
        status = kExitFailed;
        if (globals.json) {
          json.begin_object().member("path", files_[i]).member("error", info.error().message()).end_object();
        } else {
          std::fprintf(stderr, "axon: %s\n", std::string(info.error().message()).c_str());
        }
        continue;
      }
      if (globals.json) {
        write_info_json(json, *info);
      } else {
        print(out, (i == 0 ? "" : "\n") + info_text(*info));
      }
    }
    json.end_array().end_object();
    if (globals.json) {
      print(out, json.text() + "\n");
    }
    return status;
  }

 private:
  std::vector<std::string> files_;
};

}  // namespace

std::unique_ptr<Command> make_info_command() { return std::make_unique<InfoCommand>(); }

}  // namespace axon::tools
