// What users paste when asked "what does torch say": `python -c "import torch;
// print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"` and its output
// line, or an interactive session (">>> torch.cuda.get_arch_list()" then "['sm_50', …]").
// The expressions are read from the command (the arguments of each print(…), split at
// top-level commas; a bare ">>> expr") and paired with the output: one line per print, its
// values split at spaces outside brackets and quotes (a device name with spaces takes what is
// left over). Known expressions: torch.__version__, torch.version.cuda,
// torch.cuda.is_available(), torch.cuda.get_arch_list(), torch.cuda.get_device_name(…),
// torch.cuda.get_device_capability(…), torch.cuda.device_count(), torch.backends.cudnn.version(),
// torch._C._cuda_getDriverVersion() (the driver's CUDA as an integer: 9010 = 9.1).
#include <algorithm>

#include <fmt/format.h>
#include <re2/re2.h>

#include "explain/report.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

std::string compact(std::string_view e) {
  std::string out;
  for (char c : e)
    if (c != ' ' && c != '\t') out.push_back(c);
  return out;
}

// Splits `s` at `sep` outside (), [], {} and quotes.
std::vector<std::string> split_top(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (char c : s) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == sep && depth == 0) {
      if (!trim(cur).empty()) out.push_back(std::string(trim(cur)));
      cur.clear();
      if (out.size() > 64) return out;
      continue;
    }
    cur.push_back(c);
  }
  if (!trim(cur).empty()) out.push_back(std::string(trim(cur)));
  return out;
}

// The argument lists of the print(…) calls in `code`, else `code` itself as one expression.
std::vector<std::vector<std::string>> prints_of(std::string_view code) {
  std::vector<std::vector<std::string>> out;
  size_t pos = 0;
  while ((pos = code.find("print(", pos)) != std::string_view::npos && out.size() < 16) {
    size_t start = pos + 6, i = start;
    int depth = 1;
    for (; i < code.size() && depth > 0; ++i) {
      if (code[i] == '(') ++depth;
      else if (code[i] == ')') --depth;
    }
    std::vector<std::string> args;
    for (auto& a : split_top(code.substr(start, i - start - (depth == 0 ? 1 : 0)), ','))
      if (a.find('=') == std::string::npos || a.find("==") != std::string::npos) args.push_back(a);  // sep="…" is not a value
    out.push_back(std::move(args));
    pos = i;
  }
  // A bare expression (">>> torch.version.cuda"), never a statement ("from torch.utils.collect_env
  // import main; main()" prints a report of its own, read by its parser).
  if (out.empty() && code.find("torch.") != std::string_view::npos && code.find("import") == std::string_view::npos &&
      code.find(';') == std::string_view::npos)
    out.push_back({std::string(trim(code))});
  return out;
}

std::string unquote(std::string_view v) {
  v = trim(v);
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
  return std::string(v);
}

bool is_name(const std::string& e) { return contains(compact(e), "get_device_name"); }

// An expression apply() reads.
bool known(const std::string& expr) {
  std::string e = compact(expr);
  for (const char* k : {"torch.__version__", "torch.version.cuda", "torch.cuda.is_available()", "torch.cuda.get_arch_list()",
                        "torch._C._cuda_getDriverVersion()", "torch.cuda.device_count()", "torch.backends.cudnn.version()"})
    if (e == k) return true;
  return contains(e, "get_device_name") || contains(e, "get_device_capability");
}

struct Printed {
  std::string version, cuda;
  bool cuda_known = false;
  uint64_t line = 0;  // where torch's version was printed
};

void apply(const std::string& expr, const std::string& raw, ReportBuilder& out, size_t r, Printed& p) {
  std::string e = compact(expr), v = unquote(raw);
  if (e == "torch.__version__") {
    p.version = v;
    out.fact(r, "torch " + v);
  } else if (e == "torch.version.cuda") {
    p.cuda = v == "None" ? "" : v;
    p.cuda_known = true;
    out.fact(r, "torch.version.cuda = " + v);
  } else if (e == "torch.cuda.is_available()") {
    out.cuda_available(v == "True");
    out.fact(r, "torch.cuda.is_available() = " + v);
  } else if (e == "torch.cuda.get_arch_list()") {
    std::vector<std::string> archs;
    for (auto& a : split_top(std::string_view(v).substr(v.empty() ? 0 : 1, v.size() > 1 ? v.size() - 2 : 0), ','))
      if (a = unquote(a); a.starts_with("sm_") || a.starts_with("compute_")) archs.push_back(a);
    out.arch_list(archs);
    out.fact(r, "torch arch list: " + join(archs, " "));
  } else if (contains(e, "get_device_name")) {
    if (GpuInfo* g = out.gpu(0, v)) out.name_gpu(*g, v);
    out.fact(r, "GPU 0: " + v);
  } else if (contains(e, "get_device_capability")) {
    int major = 0, minor = 0;
    static const RE2 cc(R"(\(\s*(\d+)\s*,\s*(\d+)\s*\))");
    if (RE2::PartialMatch(v, cc, &major, &minor)) {
      if (GpuInfo* g = out.gpu(0, "")) out.set_cc(*g, major, minor);
      out.fact(r, fmt::format("GPU 0 compute capability {}.{}", major, minor));
    }
  } else if (e == "torch._C._cuda_getDriverVersion()") {
    int n = std::atoi(v.c_str());
    if (n >= 1000 && n < 100000) {
      out.driver_cuda(Version::from_cuda_int(n).major_minor());
      out.fact(r, fmt::format("driver runs CUDA <= {}", Version::from_cuda_int(n).major_minor()));
    }
  } else if (e == "torch.cuda.device_count()" || e == "torch.backends.cudnn.version()") {
    out.fact(r, e + " = " + v);
  }
}

// Pairs one print's expressions with its output line.
void pair(const std::vector<std::string>& exprs, std::string_view line, ReportBuilder& out, size_t r, Printed& p) {
  std::vector<std::string> values = exprs.size() == 1 ? std::vector<std::string>{std::string(trim(line))} : split_top(line, ' ');
  if (values.size() != exprs.size()) {
    size_t names = 0, at = 0;
    for (size_t i = 0; i < exprs.size(); ++i)
      if (is_name(exprs[i])) ++names, at = i;
    if (names != 1 || values.size() < exprs.size()) return;
    size_t after = exprs.size() - at - 1;
    std::vector<std::string> merged(values.begin(), values.begin() + static_cast<long>(at));
    std::vector<std::string> mid(values.begin() + static_cast<long>(at), values.end() - static_cast<long>(after));
    merged.push_back(join(mid, " "));
    merged.insert(merged.end(), values.end() - static_cast<long>(after), values.end());
    values = std::move(merged);
  }
  for (size_t i = 0; i < exprs.size(); ++i) apply(exprs[i], values[i], out, r, p);
}

bool noise(std::string_view t) {
  return contains(t, "Warning") || contains(t, "warnings.warn") || contains(t, "return torch._C");
}

}  // namespace

void parse_torch_print(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  static const RE2 command(R"re(python[\d.]*(?:\.exe)?\s+-c\s+(?:"([^"]*)"?|'([^']*)'?))re");
  // ">>> expr" (a character typed ahead of the prompt sometimes lands before it: "t>>> ") and
  // IPython's "In [3]: expr", whose value follows as "Out[3]: value".
  static const RE2 repl(R"(^\s*(?:[^\s>]{0,2}>>>|In \[\d+\]:)\s*(.+)$)");
  static const RE2 out_prompt(R"(^\s*Out\[\d+\]:\s*(.*)$)");
  static const RE2 in_prompt(R"(^\s*In \[\d+\]:)");
  Printed p;
  size_t r = SIZE_MAX;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = lines[i].text;
    std::string dq, sq, expr;
    bool cmd = t.find("-c") != std::string_view::npos && t.find("torch") != std::string_view::npos &&
               RE2::PartialMatch(t, command, &dq, &sq);
    bool prompt = !cmd && (t.find(">>>") != std::string_view::npos || t.find("In [") != std::string_view::npos) &&
                  RE2::FullMatch(t, repl, &expr) &&
                  expr.find("torch") != std::string_view::npos && !expr.starts_with("import");
    if (!cmd && !prompt) continue;
    auto prints = prints_of(cmd ? (dq.empty() ? sq : dq) : expr);
    if (prints.empty()) continue;
    size_t j = i + 1, k = 0;
    for (; j < lines.size() && j < i + 1 + 32 && k < prints.size(); ++j) {
      std::string_view o = lines[j].text;
      if (lines[j].fence || o.find(">>>") != std::string_view::npos || trim(o).starts_with("$") ||
          RE2::PartialMatch(o, in_prompt))
        break;
      std::string value;
      if (o.find("Out[") != std::string_view::npos && RE2::FullMatch(o, out_prompt, &value)) o = value;
      if (trim(o).empty() || noise(o)) continue;
      if (o.starts_with("Traceback") || contains(o, "Error:")) break;
      const auto& exprs = prints[k++];
      if (std::none_of(exprs.begin(), exprs.end(), known)) continue;  // print("hello"), print(x.shape)
      if (r == SIZE_MAX) r = out.add_report("python -c / >>> torch printout", lines[i].number, lines[j].number);
      out.at(lines[j].number);
      bool had_torch = !p.version.empty() && p.cuda_known;
      pair(exprs, o, out, r, p);
      if (!had_torch && !p.version.empty()) p.line = lines[j].number;  // where torch's version (and CUDA) was printed
      out.end_report(r, lines[j].number);
    }
    i = j > i + 1 ? j - 1 : i;
  }
  if (!p.version.empty()) out.at(p.line), out.torch(p.version, p.cuda, p.cuda_known);
}

}  // namespace cd
