#include "gpu/verify_protocol.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace cd::gpu {

namespace {

void emit(const nlohmann::json& j) {
  std::string line = json_text(j) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

void JsonLineSink::begin(const std::string& what) { emit({{"begin", what}}); }
void JsonLineSink::step(const VerifyStep& s) { emit({{"step", s}}); }
void JsonLineSink::measurement(const Measurement& m) { emit({{"measurement", m}}); }
void JsonLineSink::gpu(const VerifyGpu& g) { emit({{"gpu", g}}); }
void JsonLineSink::value(const std::string& key, const std::string& v) { emit({{"value", {key, v}}}); }

std::string ChildReport::unfinished() const {
  if (begun.empty()) return "";
  const std::string& last = begun.back();
  for (const VerifyStep& s : steps)
    if (s.name == last) return "";
  return last;
}

ChildReport parse_child_output(const std::string& out) {
  ChildReport r;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t end = out.find('\n', pos);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    nlohmann::json j = line.front() == '{' ? nlohmann::json::parse(line, nullptr, false) : nlohmann::json();
    if (!j.is_object() || j.size() != 1) {
      r.other_lines.push_back(line);
      continue;
    }
    try {
      if (j.contains("begin")) r.begun.push_back(j["begin"].get<std::string>());
      else if (j.contains("step")) r.steps.push_back(j["step"].get<VerifyStep>());
      else if (j.contains("measurement")) r.measurements.push_back(j["measurement"].get<Measurement>());
      else if (j.contains("gpu")) r.gpus.push_back(j["gpu"].get<VerifyGpu>());
      else if (j.contains("value")) r.values[j["value"][0].get<std::string>()] = j["value"][1].get<std::string>();
      else r.other_lines.push_back(line);
    } catch (const nlohmann::json::exception&) {
      r.other_lines.push_back(line);  // truncated by a crash: not ours to trust
    }
  }
  return r;
}

}  // namespace cd::gpu
