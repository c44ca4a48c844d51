#include "cli/options.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "report/exit_status.hpp"
#include "util/errors.hpp"

namespace cd {

CLI::Validator seconds_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double s = 0;
        if (!CLI::detail::lexical_cast(text, s) || !std::isfinite(s) || s <= 0)
          return fmt::format("{}: expected a number of seconds above 0 (at most {:.0f}; larger values are clamped)", text,
                             kMaxTimeoutSeconds);
        return "";
      },
      "SECONDS");
}

std::chrono::milliseconds timeout_ms(double seconds) {
  if (!(seconds > 0)) return std::chrono::milliseconds(0);  // NaN too
  return std::chrono::milliseconds(static_cast<long long>(std::min(seconds, kMaxTimeoutSeconds) * 1000));
}

void add_global_options(CLI::App& app, GlobalOptions& g) {
  app.add_flag("--json", g.json, "Machine-readable JSON output (schema in docs/json-schema.md)");
  app.add_flag("--markdown", g.markdown, "Markdown output, for pasting into a bug report");
  app.add_option("--facts", g.facts_file, "Diagnose a saved facts file (from `cuda-doctor snapshot`) instead of this machine");
  app.add_option("--root", g.root, "Read every file under DIR instead of / (chroots, images, tests)");
  app.add_option("--timeout", g.timeout_s, "Seconds allowed to each child process that touches the driver or Python")
      ->check(seconds_validator());
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
  p.timeout = timeout_ms(g.timeout_s);
  p.verbose = g.verbose;
  return p;
}

// The text of --facts FILE (or - for stdin), bounded: only a regular file or stdin, at
// most kMaxFactsBytes (a JSON document takes ~10x its size in memory once parsed). The
// file is opened non-blocking and checked with fstat before any read, so a FIFO or a
// device (/dev/zero) is refused instead of hanging or filling memory.
std::string read_facts_text(const std::string& path, std::string_view option) {
  const std::string name = path == "-" ? fmt::format("{} - (stdin)", option) : fmt::format("{} {}", option, path);
  int fd = STDIN_FILENO;
  if (path != "-") {
    fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) throw InputError(fmt::format("{}: cannot read: {}", name, std::strerror(errno)));
  }
  struct stat st {};
  bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  auto fail = [&](const std::string& why) {
    if (fd != STDIN_FILENO) close(fd);
    throw InputError(fmt::format("{}: {}", name, why));
  };
  if (fd != STDIN_FILENO && !regular) fail("not a regular file");
  if (regular && static_cast<uint64_t>(st.st_size) > kMaxFactsBytes)
    fail(fmt::format("{} bytes is above the {} MiB limit for an input file", st.st_size, kMaxFactsBytes >> 20));
  std::string text;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > kMaxFactsBytes)
      fail(fmt::format("more than the {} MiB limit for an input file", kMaxFactsBytes >> 20));
    text.append(buf, static_cast<size_t>(n));
  }
  if (fd != STDIN_FILENO) close(fd);
  return text;
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
  return facts_from_json_text(read_facts_text(g.facts_file), g.facts_file);
}

int exit_code_for(const std::vector<Finding>& findings, const GlobalOptions& g) { return exit_status(findings, g.strict); }

ReportOptions report_options(const GlobalOptions& g) {
  ReportOptions r;
  r.style = g.no_color ? Style::plain() : Style::for_fd(STDOUT_FILENO);
  r.verbose = g.verbose;
  return r;
}

void print_out(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace cd
