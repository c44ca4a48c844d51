#pragma once
// `cuda-doctor libs`: per CUDA library in one process, which file wins, by which rule, its
// version, and every other copy on the machine that lost and why (derive/libs_view.cpp).
#include <string>
#include <vector>

#include "facts/facts.hpp"

namespace cd {

struct LibLoser {
  std::string path;
  std::string version;
  std::string origin;
  std::string why;
};

struct LibWinner {
  const LoadedLibrary* load = nullptr;  // the first request for this soname (or the mapped file, --pid)
  std::string origin;                   // "wheel:…", "system", … ("" when not a known copy)
  std::vector<LibLoser> losers;
};

struct ProcessView {
  const ProcessLibs* process = nullptr;
  std::vector<LibWinner> libraries;  // CUDA libraries, first request per soname, in load order
  // Families with files of two sonames or two realpaths of one soname loaded ("cudart": 12 and 13).
  std::vector<std::pair<std::string, std::vector<const LoadedLibrary*>>> twice;
  std::vector<const LoadedLibrary*> failed;  // CUDA libraries (or anything at depth 1) that resolve nowhere
};

ProcessView derive_libs_view(const ProcessLibs& p, const Facts& facts);

}  // namespace cd
