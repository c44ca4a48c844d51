#pragma once
// The reusable kernel-image scan (used by `scan`, by probe_binaries for `check`, and
// available to `explain`):
//
//   ScanOptions opts;                                    // headers only, all cores
//   std::vector<BinaryScan> found = scan_paths({"/opt/venv/lib/python3.12/site-packages"}, opts);
//   auto verdicts = judge_all(found, {{90, "NVIDIA H200"}}, {13000, "580.159.04"}, arch_rules(Kb::get()));
//   // verdicts[i][0].verdict == Verdict::native | jit | no_kernel_image | … (binary/verdict.hpp)
//
// Files named directly are always reported (a FIFO or a device named directly as an
// error saying why it was not read); files met inside directories only when they carry
// CUDA code (or are malformed). Symlinks to the same file count once.
// Malformed input never throws: it becomes BinaryScan::notes / ::error.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "binary/file_scan.hpp"
#include "binary/verdict.hpp"
#include "facts/binary.hpp"

#include "util/root.hpp"

namespace cd {

struct ScanOptions {
  bool kernels = false;  // decompress and name the kernels of each container
  size_t threads = 0;    // 0: one per core
  bin::ScanLimits limits;  // notes and decompressed bytes per file and per run (binary/budget.hpp)
  // Called from worker threads (serialised) after each file.
  std::function<void(size_t done, size_t total, const std::string& path)> progress;
  // The paths lie under root.prefix() (--root): links in them resolve inside the root.
  Root root;
  // check: read each container only until the local GPUs' answer is settled (binary/file_scan).
  const bin::ReadFocus* focus = nullptr;
  // Only what the loader maps (loadable_name): objects, archives and standalone cubin/fatbin/PTX
  // files are data a program loads explicitly, not kernels the environment's frameworks run.
  bool loadable_only = false;
};

struct ScanStats {
  size_t files_examined = 0;  // candidate files opened
  uint64_t bytes = 0;         // their total size
  std::vector<std::string> walk_errors;
};

std::vector<BinaryScan> scan_paths(const std::vector<std::string>& paths, const ScanOptions& opts,
                                   ScanStats* stats = nullptr);

// One file (mmapped); without a budget it gets the default limits of its own.
BinaryScan scan_binary(const std::string& path, bool kernels, bin::RunBudget* budget = nullptr);
// Distinct images and container groups of a raw scan.
BinaryScan summarize(const std::string& path, bin::FileScan raw);

// Whether a name met while walking a directory may be a binary worth opening
// (.so, .so.N, .o, .a, .cubin, .fatbin, .ptx, executables).
bool candidate_name(std::string_view name, bool executable);
// The subset the dynamic loader maps: .so, .so.N, executables without an extension.
bool loadable_name(std::string_view name, bool executable);
// "torch", "nvidia/cublas", "CUDA toolkit /usr/local/cuda-13.0", "" from a path.
std::string package_of(const std::string& path);

// Malformed input was found in it (BinaryScan::problems): truncated, bad headers.
inline bool is_corrupt(const BinaryScan& b) { return b.problems > 0; }

}  // namespace cd
