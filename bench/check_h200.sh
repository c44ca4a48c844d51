#!/usr/bin/env bash
# One device run for issue 2: check's report on the H200, the timing against
# `python -m torch.utils.collect_env`, and the libraries torch really maps (to compare
# with check's ld.so emulation). Usage on the device: OUT=$OUT bash bench/check_h200.sh BINARY
set -uo pipefail
doctor=${1:-build/cuda-doctor}
out=${OUT:-/tmp/check_h200}
mkdir -p "$out"
export NO_COLOR=1
py=$(command -v python3)

"$doctor" check >"$out/check.txt" 2>&1; echo "check exit $?" >>"$out/check.txt"
"$doctor" check --json >"$out/check.json" 2>"$out/check.err"
"$doctor" snapshot >"$out/facts.json" 2>>"$out/check.err"
{
  "$doctor" check --deep -v; echo "check --deep exit $?"
  # JAX asked for the CPU on purpose, then every GPU hidden: the first is no problem, the second is.
  echo "# JAX_PLATFORMS=cpu"; JAX_PLATFORMS=cpu "$doctor" check --deep -v | grep -E -- '--deep|framework\.'
  echo "# CUDA_VISIBLE_DEVICES=''"; CUDA_VISIBLE_DEVICES= "$doctor" check --deep -v | grep -E -- '--deep|framework\.|device\.'
} >"$out/check_deep.txt" 2>&1
bash bench/check_vs_collect_env.sh "$doctor" "$py" >"$out/bench_check.txt" 2>&1
# Where one check's time goes: the parent's and the __driver child's marks on one clock.
rm -f "$out/trace.txt"; CUDA_DOCTOR_TRACE="$out/trace.txt" "$doctor" check >/dev/null 2>&1

{
  echo "# libraries torch maps after CUDA init (/proc/self/maps)"
  "$py" -c "import torch; torch.zeros(1).cuda(); import torch.distributed; print(open('/proc/self/maps').read())" |
    awk '{print $6}' | grep -E 'lib(cudnn|nccl|cudart|cublas)[^/]*\.so' | sort -u
  echo "# driver start-up costs (ctypes, one process each)"
  "$py" -c "import ctypes,time; t=time.perf_counter(); l=ctypes.CDLL('libnvidia-ml.so.1'); r=l.nvmlInit_v2(); print(f'nvmlInit {time.perf_counter()-t:.3f} s rc {r}')"
  "$py" -c "import ctypes,time; t=time.perf_counter(); l=ctypes.CDLL('libcuda.so.1'); r=l.cuInit(0); print(f'cuInit {time.perf_counter()-t:.3f} s rc {r}')"
  for i in 1 2 3; do /usr/bin/time -f "__driver %e s" "$doctor" __driver >/dev/null; done
  echo "# scan of libtorch_cuda.so vs cuobjdump --list-elf"
  lib=$("$py" -c "import torch,os; print(os.path.join(os.path.dirname(torch.__file__),'lib','libtorch_cuda.so'))")
  /usr/bin/time -f "cuobjdump --list-elf %e s" cuobjdump --list-elf "$lib" >/dev/null
  for i in 1 2 3; do /usr/bin/time -f "scan %e s" "$doctor" scan "$lib" >/dev/null; done
} >"$out/extra.txt" 2>&1
cat "$out/bench_check.txt"
