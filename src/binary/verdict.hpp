#pragma once
// THE compatibility verdict, in one place: (kernel images, GPU, driver) ->
// native | jit | no_kernel_image | ptx_too_new | compression_unsupported.
// Rules (fatbin_and_arch.md §2, §5): SASS sm_XY runs on the same major with minor >= Y,
// except on Tegra devices (own ABI); `a` SASS/PTX only on exactly X.Y; `f` within the
// family; plain PTX JITs on any newer GPU if the driver knows its ISA; zstd images need
// a driver that decompresses them. Per container (= one module the driver loads): SASS
// first, then PTX; a binary is as bad as its worst container.
#include <string>
#include <vector>

#include "facts/binary.hpp"
#include "kb/arch.hpp"

namespace cd {

enum class Verdict { native, jit, compression_unsupported, ptx_too_new, no_kernel_image, no_cuda_code };

const char* verdict_name(Verdict v);  // "native", "jit", …
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

// Whether one image can serve the GPU, before driver limits.
bool sass_runs_on(const KernelImage& img, int device_sm, const ArchRules& rules);
bool ptx_jits_for(const KernelImage& img, int device_sm, const ArchRules& rules);
// Driver limits for one image.
bool ptx_isa_supported(const KernelImage& img, const DriverTarget& driver, const ArchRules& rules);
bool compression_supported(const KernelImage& img, const DriverTarget& driver, const ArchRules& rules);

// One container (its images) on one GPU.
Verdict judge_container(const std::vector<const KernelImage*>& images, const GpuTarget& gpu,
                        const DriverTarget& driver, const ArchRules& rules);

// A whole scanned binary on one GPU: worst container, with counts and a detail line.
GpuVerdict judge_binary(const BinaryScan& scan, const GpuTarget& gpu, const DriverTarget& driver,
                        const ArchRules& rules);

}  // namespace cd
