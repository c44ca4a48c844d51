#pragma once
// The knowledge behind kernel-image verdicts (data/arch_rules.toml, data/ptx_isa.toml):
// Tegra exceptions, renumbered archs, PTX ISA <-> CUDA, compression driver floors,
// and which toolkit builds an architecture. Used by binary/verdict.cpp.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kb/kb.hpp"
#include "util/version.hpp"

namespace cd {

struct PtxIsaRow {
  int isa = 0;   // major*10 + minor: 90 for 9.0
  int cuda = 0;  // 13000
  std::string source;
};

struct CompressionFloor {
  std::string kind;  // "zstd", "lz4"
  Version min_driver;
  int min_cuda = 0;
  std::string source;
};

struct SmToolkit {
  int sm = 0;
  Version first_cuda, last_cuda;  // last empty: still supported
  std::string source;
};

struct ArchRules {
  std::set<int> tegra;                       // device sms with their own ABI: 53, 62, 72, 87, 101
  std::map<int, std::set<int>> also_runs_on;  // SASS sm -> other device sms it runs on (101 -> 110)
  std::vector<PtxIsaRow> ptx;                // ascending by isa
  int extrapolate_isa_major = 0, extrapolate_cuda_major = 0;
  std::vector<CompressionFloor> compression;
  std::vector<SmToolkit> toolkits;
  std::string tegra_source, ptx_source;
};

const ArchRules& arch_rules(const Kb& kb);

// The CUDA version (cuDriverGetVersion encoding) that first JITs PTX ISA `isa` (x10); 0 if unknown.
int cuda_for_ptx_isa(const ArchRules& r, int isa);
// The newest PTX ISA (x10) a driver of CUDA `cuda` can JIT.
int max_ptx_isa(const ArchRules& r, int cuda);
const CompressionFloor* compression_floor(const ArchRules& r, const std::string& kind);
const SmToolkit* toolkit_for_sm(const ArchRules& r, int sm);

}  // namespace cd
