#include "probe/libs_catalog.hpp"

#include <cctype>

namespace cd {

const std::vector<CudaLibFamily>& cuda_lib_families() {
  // Wheel names: pypi.org/project/nvidia-<x>(-cu12|-cu13); toolkit keys: the
  // component names of /usr/local/cuda/version.json (CUDA 11.1+).
  static const std::vector<CudaLibFamily> families = {
      {"cudart", "cudart", false, "nvidia-cuda-runtime", "cuda_cudart"},
      {"cublas", "cublas", false, "nvidia-cublas", "libcublas"},
      {"cublasLt", "cublasLt", false, "nvidia-cublas", "libcublas"},
      {"cudnn", "cudnn", true, "nvidia-cudnn", ""},
      {"nccl", "nccl", false, "nvidia-nccl", ""},
      {"cufft", "cufft", false, "nvidia-cufft", "libcufft"},
      {"curand", "curand", false, "nvidia-curand", "libcurand"},
      {"cusolver", "cusolver", false, "nvidia-cusolver", "libcusolver"},
      {"cusparse", "cusparse", false, "nvidia-cusparse", "libcusparse"},
      {"nvrtc", "nvrtc", false, "nvidia-cuda-nvrtc", "cuda_nvrtc"},
      {"nvJitLink", "nvJitLink", false, "nvidia-nvjitlink", "libnvjitlink"},
      {"cupti", "cupti", false, "nvidia-cuda-cupti", "cuda_cupti"},
  };
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
