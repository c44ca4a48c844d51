#pragma once
// The line protocol between `cuda-doctor __verify STEP` (child) and verify (parent):
// one JSON object per line on stdout, flushed at once. Lines that are not ours
// (NCCL_DEBUG=INFO prints to stdout) are kept apart for the NCCL summary.
#include <map>
#include <string>
#include <vector>

#include "gpu/verify_sink.hpp"

namespace cd::gpu {

// Writes each item as a JSON line to stdout and flushes.
class JsonLineSink : public StepSink {
 public:
  void begin(const std::string& what) override;
  void step(const VerifyStep& s) override;
  void measurement(const Measurement& m) override;
  void gpu(const VerifyGpu& g) override;
  void value(const std::string& key, const std::string& v) override;
};

// What a child reported, parsed back.
struct ChildReport {
  std::vector<std::string> begun;  // in order
  std::vector<VerifyStep> steps;
  std::vector<Measurement> measurements;
  std::vector<VerifyGpu> gpus;
  std::map<std::string, std::string> values;
  std::vector<std::string> other_lines;  // not ours (NCCL INFO, warnings)

  // The step that was begun but never reported (where a crash or hang happened), "" if none.
  std::string unfinished() const;
};

ChildReport parse_child_output(const std::string& out);

}  // namespace cd::gpu
