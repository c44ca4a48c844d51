#pragma once
// THE compatibility verdict, in one place: (kernel images, GPU, driver) ->
// native | jit | no_kernel_image | ptx_too_new | compression_unsupported.
// Rules (CUDA C++ Programming Guide, "Binary Compatibility" and "PTX Compatibility"; nvcc manual,
// "GPU Feature List" for the a/f suffixes): SASS sm_XY runs on the same major with minor >= Y,
// except on Tegra devices (own ABI); `a` SASS/PTX only on exactly X.Y; `f` within the
// family; plain PTX JITs on any newer GPU if the driver knows its ISA; zstd images need
// a driver that decompresses them. Per container (= one module the driver loads): SASS
// first, then PTX; a binary is as bad as its worst container.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "binary/fatbin.hpp"
#include "facts/binary.hpp"
#include "kb/arch.hpp"

namespace cd {

// Alphabetical, so findings grouped by verdict keep the order of their names; verdict_rank orders by badness.
enum class Verdict { compression_unsupported, jit, native, no_cuda_code, no_kernel_image, ptx_too_new };

const char* verdict_name(Verdict v);  // "native", "jit", … (the JSON spelling)
NLOHMANN_JSON_SERIALIZE_ENUM(Verdict, {{Verdict::native, "native"},
                                       {Verdict::jit, "jit"},
                                       {Verdict::compression_unsupported, "compression_unsupported"},
                                       {Verdict::ptx_too_new, "ptx_too_new"},
                                       {Verdict::no_kernel_image, "no_kernel_image"},
                                       {Verdict::no_cuda_code, "no_cuda_code"}})
// Worse verdicts rank higher (no_cuda_code ranks 0: nothing to run).
int verdict_rank(Verdict v);

struct GpuTarget {
  int sm = 0;        // compute capability x 10: 90, 120
  std::string name;  // "NVIDIA H200", "RTX 4090" or ""
  std::string label() const;  // "sm_90 (NVIDIA H200)"
};

struct DriverTarget {
  int cuda = 0;         // cuDriverGetVersion encoding (13000); 0 = unknown: PTX ISA not checked
  std::string version;  // "580.159.04" or "550.54" as given; "" = unknown
};

// One binary on one GPU: derived (derive/model.hpp), never stored in Facts.
struct GpuVerdict {
  std::string gpu;  // "sm_90 (NVIDIA H200)"
  int sm = 0;
  Verdict verdict = Verdict::no_cuda_code;
  std::string detail;          // "needs sm_90 SASS or compute_≤90 PTX; has sm_75"
  int containers_judged = 0;   // containers with SASS/PTX that could be meant for this GPU
  int containers_failing = 0;  // of those, the ones that cannot serve it
  int containers_jit = 0;      // containers served only by PTX JIT
  int containers_other_arch = 0;  // single-architecture containers for other GPUs (runtime-dispatched), not failing
  std::vector<std::string> kernels_failing;  // --kernels: kernels that would not run
};
void to_json(nlohmann::json& j, const GpuVerdict& v);
void from_json(const nlohmann::json& j, GpuVerdict& v);

// Whether one image can serve the GPU, before driver limits.
bool sass_runs_on(const KernelImage& img, int device_sm, const ArchRules& rules);
bool ptx_jits_for(const KernelImage& img, int device_sm, const ArchRules& rules);
// Driver limits for one image.
bool ptx_isa_supported(const KernelImage& img, const DriverTarget& driver, const ArchRules& rules);
bool compression_supported(const KernelImage& img, const DriverTarget& driver, const ArchRules& rules);

// One container (its images) on one GPU.
Verdict judge_container(const std::vector<const KernelImage*>& images, const GpuTarget& gpu,
                        const DriverTarget& driver, const ArchRules& rules);

// What check needs of a container while it is read: once its entries hold SASS that runs
// natively on every GPU (in a compression the driver loads), no later entry can change its
// verdict for them (judge_container takes native SASS first), so the rest is not read.
bin::Enough native_on_all(const std::vector<GpuTarget>& gpus, const DriverTarget& driver, const ArchRules& rules);

// A whole scanned binary on one GPU: worst container, with counts and a detail line.
GpuVerdict judge_binary(const BinaryScan& scan, const GpuTarget& gpu, const DriverTarget& driver,
                        const ArchRules& rules);

// An arch list ("sm_86", "compute_90a": torch.cuda.get_arch_list(), a wheel's record) on one
// GPU, as if one container held those images; driver limits aside.
Verdict judge_arch_list(const std::vector<std::string>& archs, int sm, const ArchRules& rules);

// Every binary on every GPU: [binary][gpu].
std::vector<std::vector<GpuVerdict>> judge_all(const std::vector<BinaryScan>& scans, const std::vector<GpuTarget>& gpus,
                                               const DriverTarget& driver, const ArchRules& rules);

}  // namespace cd
