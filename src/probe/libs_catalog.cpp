#include "probe/libs_catalog.hpp"

#include <cctype>

#include "kb/libraries.hpp"

namespace cd {

const std::vector<CudaLibFamily>& cuda_lib_families() {
  // data/libraries.toml of the built-in knowledge base, read once: every file name met is checked.
  static const std::vector<CudaLibFamily> families = [] {
    std::vector<CudaLibFamily> out;
    for (const auto& f : library_families(Kb::get())) out.push_back({f.name, f.stem, f.sublibs, f.companions, f.wheel, f.toolkit_key});
    return out;
  }();
  return families;
}

namespace {

// ".so" then nothing or ".<digits>…"
bool so_suffix(std::string_view rest) {
  if (rest.substr(0, 3) != ".so") return false;
  rest.remove_prefix(3);
  if (rest.empty()) return true;
  if (rest.size() < 2 || rest[0] != '.' || !std::isdigit(static_cast<unsigned char>(rest[1]))) return false;
  for (char c : rest)
    if (c != '.' && !std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

const CudaLibFamily* cuda_lib_family(std::string_view f) {
  if (f.substr(0, 3) != "lib") return nullptr;
  f.remove_prefix(3);
  for (const auto& fam : cuda_lib_families()) {
    for (const auto& c : fam.companions)
      if (f.substr(0, c.size()) == c && so_suffix(f.substr(c.size()))) return &fam;
    if (f.substr(0, fam.stem.size()) != fam.stem) continue;
    std::string_view rest = f.substr(fam.stem.size());
    if (so_suffix(rest)) return &fam;
    if (fam.sublibs && !rest.empty() && rest[0] == '_') {  // libcudnn_engines_precompiled.so.9
      size_t i = 1;
      while (i < rest.size() && (std::islower(static_cast<unsigned char>(rest[i])) || rest[i] == '_')) ++i;
      if (i > 1 && so_suffix(rest.substr(i))) return &fam;
    }
    if (rest.size() > 9 && rest[0] == '-') {  // torch's bundled copies: libcudart-<8 hex>.so.12
      bool hex = true;
      for (size_t i = 1; i < 9; ++i) hex &= std::isxdigit(static_cast<unsigned char>(rest[i])) != 0;
      if (hex && so_suffix(rest.substr(9))) return &fam;
    }
  }
  return nullptr;
}

std::string version_from_filename(std::string_view f) {
  auto at = f.find(".so.");
  if (at == std::string_view::npos) return "";
  std::string_view v = f.substr(at + 4);
  for (char c : v)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return "";
  return std::string(v);
}

}  // namespace cd
