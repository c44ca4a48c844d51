// GPU device nodes, containers without GPUs, and whether the machine has a GPU at all.
#include <algorithm>
#include <cctype>

#include "derive/derive_parts.hpp"

namespace cd {
namespace {

// /dev/nvidia0, /dev/nvidia1 … (not nvidiactl or nvidia-uvm).
bool has_gpu_node(const DriverFacts& d) {
  return std::any_of(d.device_nodes.begin(), d.device_nodes.end(), [](const std::string& n) {
    return n.size() > 11 && n.rfind("/dev/nvidia", 0) == 0 && std::isdigit(static_cast<unsigned char>(n[11]));
  });
}

}  // namespace

PlatformModel derive_platform(const Facts& f) {
  const DriverFacts& d = f.driver;
  PlatformModel p;
  p.gpu_device_nodes = has_gpu_node(d);
  p.machine_has_gpu = !d.gpus.empty() || !d.pci_gpus.empty() || d.module_loaded;
  // A container not given the host's GPUs. A host without any NVIDIA GPU (PCI bus readable,
  // none there, no module) is not that: there the driver is simply missing.
  bool host_has_gpu = d.module_loaded || !d.pci_gpus.empty() || d.pci_devices_seen == 0;
  p.container_without_gpus = !f.platform.container.empty() && !p.gpu_device_nodes && !f.platform.dev_dxg && host_has_gpu;
  // cuInit 100 CUDA_ERROR_NO_DEVICE, or zero devices: CUDA_VISIBLE_DEVICES hides them or the nodes are missing.
  constexpr int kNoDevice = 100;
  p.cuda_sees_no_gpu = d.cu_init_status == kNoDevice || (d.cu_init_status == 0 && d.cuda_device_count == 0);
  derive_driver_install(f, p);
  p.topology = derive_topology(f);
  return p;
}

}  // namespace cd
