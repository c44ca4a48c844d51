#include "cli/options.hpp"

namespace cd {

void register_scan(CLI::App& app, GlobalOptions&, int&) {
  app.add_subcommand("scan", "(not built yet)");
}

}  // namespace cd
