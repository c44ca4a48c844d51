#include "probe/python_deep.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/strings.hpp"
#include "util/subprocess.hpp"

namespace cd {

namespace {

constexpr const char* kMarker = "CUDA_DOCTOR_DEEP:";

// Each step guarded: a failing cuDNN query must not hide the device count.
constexpr const char* kScript = R"PY(
import json, sys, traceback
r = {}
def step(key, fn):
    try:
        r[key] = fn()
    except Exception as e:
        r.setdefault('step_errors', []).append('%s: %s' % (key, traceback.format_exception_only(type(e), e)[-1].strip()))
try:
    import torch
    r['torch_version'] = torch.__version__
    r['torch_cuda'] = torch.version.cuda or ''
    step('cuda_available', lambda: bool(torch.cuda.is_available()))
    step('device_count', lambda: torch.cuda.device_count() if r.get('cuda_available') else 0)
    step('capabilities', lambda: ['%d.%d' % torch.cuda.get_device_capability(i) for i in range(r.get('device_count', 0))])
    step('arch_list', lambda: torch._C._cuda_getArchFlags().split() if hasattr(torch._C, '_cuda_getArchFlags') else torch.cuda.get_arch_list())
    step('cudnn_version', lambda: str(torch.backends.cudnn.version() or ''))
    step('nccl_version', lambda: '.'.join(str(x) for x in torch.cuda.nccl.version()) if torch.version.cuda else '')
except BaseException as e:
    r['error'] = traceback.format_exception_only(type(e), e)[-1].strip()
libs = set()
try:
    for line in open('/proc/self/maps'):
        parts = line.split()
        if len(parts) >= 6 and '.so' in parts[5]:
            base = parts[5].rsplit('/', 1)[-1]
            if base.startswith(('libcuda', 'libcudart', 'libcudnn', 'libnccl', 'libcublas', 'libnvrtc', 'libnvJitLink', 'libcusparse', 'libcufft', 'libcurand', 'libcusolver', 'libnvidia-ml', 'libnvshmem', 'libcupti', 'libtorch_cuda')):
                libs.add(parts[5])
except Exception:
    pass
r['loaded_libraries'] = sorted(libs)
sys.stdout.write('\nCUDA_DOCTOR_DEEP:' + json.dumps(r) + '\n')
)PY";

// JAX logs why its CUDA backend failed and then falls back to the CPU; those lines are
// the evidence, so the script keeps stderr and reports the backend it got.
constexpr const char* kJaxScript = R"PY(
import json, sys, traceback
r = {}
try:
    import jax
    r['version'] = jax.__version__
    r['backend'] = jax.default_backend()
    r['devices'] = [getattr(d, 'device_kind', str(d)) for d in jax.devices()]
except BaseException as e:
    r['error'] = traceback.format_exception_only(type(e), e)[-1].strip()
sys.stdout.write('\nCUDA_DOCTOR_DEEP:' + json.dumps(r) + '\n')
)PY";

std::string last_line(const std::string& text) {
  auto lines = split(text, '\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (!trim(*it).empty()) return std::string(trim(*it));
  return {};
}

}  // namespace

DeepCheck parse_deep_output(const std::string& out, const std::string& err) {
  DeepCheck d;
  d.ran = true;
  auto at = out.rfind(kMarker);
  if (at == std::string::npos) {
    d.error = last_line(err).empty() ? "no result from the interpreter" : last_line(err);
    return d;
  }
  std::string line = out.substr(at + std::string(kMarker).size());
  line = line.substr(0, line.find('\n'));
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    d.error = "unreadable result from the interpreter";
    return d;
  }
  d.error = j.value("error", "");
  d.torch_version = j.value("torch_version", "");
  d.torch_cuda = j.value("torch_cuda", "");
  d.cuda_available = j.value("cuda_available", false);
  d.device_count = j.value("device_count", 0);
  d.capabilities = j.value("capabilities", std::vector<std::string>{});
  d.arch_list = j.value("arch_list", std::vector<std::string>{});
  d.cudnn_version = j.value("cudnn_version", "");
  d.nccl_version = j.value("nccl_version", "");
  d.loaded_libraries = j.value("loaded_libraries", std::vector<std::string>{});
  // A failed step (e.g. cuDNN query) is reported when nothing worse happened.
  if (d.error.empty() && j.contains("step_errors") && j["step_errors"].is_array() && !j["step_errors"].empty())
    d.error = j["step_errors"][0].get<std::string>();
  return d;
}

DeepJax parse_deep_jax_output(const std::string& out, const std::string& err) {
  DeepJax d;
  d.ran = true;
  nlohmann::json j;
  if (auto at = out.rfind(kMarker); at != std::string::npos) {
    std::string line = out.substr(at + std::string(kMarker).size());
    j = nlohmann::json::parse(line.substr(0, line.find('\n')), nullptr, false);
  }
  if (!j.is_object()) {
    d.error = last_line(err).empty() ? "no result from the interpreter" : last_line(err);
    return d;
  }
  d.error = j.value("error", "");
  d.version = j.value("version", "");
  d.backend = j.value("backend", "");
  d.devices = j.value("devices", std::vector<std::string>{});
  if (d.error.empty() && d.backend == "cpu") {
    // The reason is in JAX's own log lines ("Unable to initialize backend 'cuda': …").
    for (const auto& line : split(err, '\n'))
      if (contains(line, "Unable to initialize backend") || contains(line, "Falling back to cpu") ||
          contains(line, "CUDA backend failed")) {
        d.error = std::string(trim(line));
        break;
      }
  }
  return d;
}

DeepJax run_deep_jax(const std::string& interpreter, std::chrono::milliseconds timeout) {
  ProcessOptions po;
  po.timeout = timeout;
  po.max_output = 1u << 20;
  ProcessResult r = run_process({interpreter, "-c", kJaxScript}, po);
  DeepJax d;
  if (!r.started || r.timed_out || r.signal) {
    d.ran = true;
    d.error = fmt::format("{} {}", interpreter, r.describe());
    if (auto l = last_line(r.err); !l.empty()) d.error += ": " + l;
  } else {
    d = parse_deep_jax_output(r.out, r.err);
  }
  d.seconds = r.seconds;
  return d;
}

DeepCheck run_deep_check(const std::string& interpreter, std::chrono::milliseconds timeout) {
  ProcessOptions po;
  po.timeout = timeout;
  po.max_output = 1u << 20;
  ProcessResult r = run_process({interpreter, "-c", kScript}, po);
  DeepCheck d;
  if (!r.started || r.timed_out || r.signal) {
    d.ran = true;
    d.error = fmt::format("{} {}", interpreter, r.describe());
    if (auto l = last_line(r.err); !l.empty()) d.error += ": " + l;
  } else {
    d = parse_deep_output(r.out, r.err);
  }
  d.seconds = r.seconds;
  return d;
}

}  // namespace cd
