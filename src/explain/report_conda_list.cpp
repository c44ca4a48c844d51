// `conda list`: "# packages in environment at /opt/conda:", "#", "# Name  Version  Build
// Channel", then "pytorch  2.1.0  py3.10_cuda12.1_cudnn8.9.2_0  pytorch" rows. conda's torch is
// "pytorch"; its build string names the CUDA it was built for (py3.10_cuda12.1_…, conda-forge's
// cuda120_py310…, cpu_py310… for CPU builds); "pytorch-cuda 12.1" and "cudatoolkit 11.8.0"
// name the CUDA of the environment when the build string does not.
#include <re2/re2.h>

#include "explain/report.hpp"
#include "util/strings.hpp"

namespace cd {

void parse_conda_list(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  static const RE2 head(R"(^\s*#\s*packages in environment at\s)");
  static const RE2 row(R"(^\s*([A-Za-z0-9_][A-Za-z0-9._\-]*)\s+(\d\S*)(?:\s+(\S+))?(?:\s+(\S+))?\s*$)");
  static const RE2 cuda_dotted(R"((?:^|_)cuda(\d+)\.(\d+))");
  static const RE2 cuda_packed(R"((?:^|_)cuda(\d\d)(\d)(?:_|$))");
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].text.find("packages in environment") == std::string_view::npos || !RE2::PartialMatch(lines[i].text, head)) continue;
    size_t r = out.add_report("conda list", lines[i].number, lines[i].number);
    std::string name, version, build, channel, torch_version, torch_cuda, env_cuda;
    bool cuda_known = false;
    uint64_t torch_line = lines[i].number;
    size_t j = i + 1;
    for (; j < lines.size() && j < i + 1 + out.limits().max_packages; ++j) {
      std::string_view t = trim(lines[j].text);
      if (lines[j].fence) break;
      if (t.starts_with("#") || t.empty()) continue;
      if (!RE2::FullMatch(lines[j].text, row, &name, &version, &build, &channel)) break;
      out.end_report(r, lines[j].number);
      out.at(lines[j].number);
      std::string maj, min;
      if (name == "pytorch") {
        torch_version = version;
        torch_line = lines[j].number;
        if (RE2::PartialMatch(build, cuda_dotted, &maj, &min) || RE2::PartialMatch(build, cuda_packed, &maj, &min))
          torch_cuda = maj + "." + min, cuda_known = true;
        else if (build.starts_with("cpu") || contains(build, "_cpu_"))
          cuda_known = true;
        out.package("torch", version, "conda");
        out.fact(r, "pytorch " + version + " (" + build + ")");
      } else {
        out.package(name, version, channel == "pypi" ? "pip" : "conda");
        if ((name == "pytorch-cuda" || name == "cudatoolkit" || name == "cuda-version") && env_cuda.empty()) {
          auto v = split(version, '.');
          if (v.size() >= 2) env_cuda = v[0] + "." + v[1];
          out.fact(r, name + " " + version);
        }
      }
    }
    if (!torch_version.empty()) {
      if (!cuda_known && !env_cuda.empty()) torch_cuda = env_cuda, cuda_known = true;
      out.at(torch_line);
      out.torch(torch_version, torch_cuda, cuda_known);
    }
    i = j > i ? j - 1 : i;
  }
}

}  // namespace cd
