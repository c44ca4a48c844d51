#include "cli/options.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <iostream>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "util/errors.hpp"

namespace cd {

void add_global_options(CLI::App& app, GlobalOptions& g) {
  app.add_flag("--json", g.json, "Machine-readable JSON output (schema in docs/json-schema.md)");
  app.add_flag("--markdown", g.markdown, "Markdown output, for pasting into a bug report");
  app.add_option("--facts", g.facts_file, "Diagnose a saved facts file (from `cuda-doctor snapshot`) instead of this machine");
  app.add_option("--root", g.root, "Read every file under DIR instead of / (chroots, images, tests)");
  app.add_option("--timeout", g.timeout_s, "Seconds allowed to each child process that touches the driver or Python")
      ->check(CLI::PositiveNumber);
  app.add_flag("-v,--verbose", g.verbose, "More detail (repeatable)");
  app.add_flag("--strict", g.strict, "Exit 1 when there are warnings");
  app.add_flag("--no-color", g.no_color, "No ANSI colors (NO_COLOR is honoured too)");
  repeatable(app.add_option("--ignore", g.ignore, "Suppress a finding id, or a family with a trailing * (repeatable, or ID,ID)"));
}

// CLI11 lets a vector option take every following word: `--gpu H100 ext.so` would read
// ext.so as a second GPU, even written `--gpu=H100 ext.so`. One value per use, commas
// for several, so positionals are never swallowed.
CLI::Option* repeatable(CLI::Option* opt) { return opt->allow_extra_args(false)->delimiter(','); }

ProbeOptions probe_options(const GlobalOptions& g) {
  ProbeOptions p;
  p.root = Root(g.root);
  p.env = current_environment();
  p.timeout = std::chrono::milliseconds(static_cast<long long>(g.timeout_s * 1000));
  p.verbose = g.verbose;
  return p;
}

Facts load_or_probe(const GlobalOptions& g, const std::function<Facts(const ProbeOptions&)>& probe) {
  if (g.facts_file.empty()) {
    if (!g.root.empty()) {
      struct stat st;
      if (stat(g.root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw UsageError(fmt::format("--root {}: not a directory", g.root));
    }
    return probe(probe_options(g));
  }
  std::string text;
  if (g.facts_file == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream in(g.facts_file, std::ios::binary);
    if (!in) throw InputError(fmt::format("cannot read facts file {}", g.facts_file));
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  return facts_from_json_text(text, g.facts_file);
}

int exit_code_for(const std::vector<Finding>& findings, const GlobalOptions& g) {
  Severity w = worst(findings);
  if (w == Severity::error) return exit_code::errors;
  if (w == Severity::warning && g.strict) return exit_code::warnings;
  return exit_code::ok;
}

void print_out(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace cd
