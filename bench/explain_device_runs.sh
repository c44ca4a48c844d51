#!/usr/bin/env bash
# Provokes real CUDA failures on a GPU machine and diagnoses each with
# `cuda-doctor explain -- …` (docs/explain-device-runs.md records a run on the H200).
# Usage: bench/explain_device_runs.sh CUDA_DOCTOR_BINARY OUTDIR
# Needs: nvcc (/usr/local/cuda/bin), python3 with torch, a GPU newer than sm_75.
set -u
doctor=$1
out=$2
work=$(mktemp -d)
mkdir -p "$out"
export NO_COLOR=1 PYTHONUNBUFFERED=1
nvcc=/usr/local/cuda/bin/nvcc

# 1. A kernel built only for sm_75 (SASS, no PTX), launched through ctypes.
cat > "$work/k75.cu" <<'CU'
#include <cstdio>
#include <cuda_runtime.h>
__global__ void add_one(int* p) { p[threadIdx.x] += 1; }
extern "C" int launch(char* msg, int len) {
  int* d = nullptr;
  cudaError_t e = cudaMalloc(&d, 32 * sizeof(int));
  if (e == cudaSuccess) { add_one<<<1, 32>>>(d); e = cudaGetLastError(); }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  snprintf(msg, len, "%s (%d): %s", cudaGetErrorName(e), (int)e, cudaGetErrorString(e));
  cudaFree(d);
  return (int)e;
}
CU
$nvcc -gencode arch=compute_75,code=sm_75 -shared -Xcompiler -fPIC -o "$work/libk75.so" "$work/k75.cu" > "$out/build_k75.txt" 2>&1
cat > "$work/k75.py" <<PY
import ctypes, sys
lib = ctypes.CDLL("$work/libk75.so")
buf = ctypes.create_string_buffer(256)
rc = lib.launch(buf, 256)
if rc != 0:
    raise RuntimeError("CUDA error: " + buf.value.decode())
print("kernel ran")
PY

# 2. A plain CUDA program, for the stub-library case.
cat > "$work/alloc.cu" <<'CU'
#include <cstdio>
#include <cuda_runtime.h>
int main() {
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, 1 << 20);
  if (e != cudaSuccess) {
    fprintf(stderr, "cudaMalloc failed: %s (%s, %d)\n", cudaGetErrorString(e), cudaGetErrorName(e), (int)e);
    return 1;
  }
  printf("allocated\n");
  return 0;
}
CU
$nvcc -o "$work/alloc" "$work/alloc.cu" >> "$out/build_k75.txt" 2>&1
# What a Dockerfile that symlinks the stub as libcuda.so.1 produces.
mkdir -p "$work/stubdir"
ln -sf /usr/local/cuda/lib64/stubs/libcuda.so "$work/stubdir/libcuda.so.1"

run() {  # name, then the command
  local name=$1; shift
  echo "=== $name: $*" | tee -a "$out/summary.txt"
  local t0=$(date +%s%N)
  timeout 150 "$@" > "$out/$name.out" 2> "$out/$name.err"
  local rc=$?
  echo "exit $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$out/summary.txt"
  grep -E "^  (✖|▲|ℹ) " "$out/$name.out" | tee -a "$out/summary.txt"
}

run sm75_kernel "$doctor" explain -- python3 "$work/k75.py"
run no_visible_devices env CUDA_VISIBLE_DEVICES= "$doctor" explain -- python3 -c "import torch; torch.zeros(1).cuda()"
run stub_libcuda_ld_path env LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs "$doctor" explain -- python3 -c "
import ctypes
c = ctypes.CDLL('libcuda.so')  # the unversioned name, as numba tries first
rc = c.cuInit(0)
s = ctypes.c_char_p()
c.cuGetErrorString(rc, ctypes.byref(s))
n = ctypes.c_char_p()
c.cuGetErrorName(rc, ctypes.byref(n))
raise SystemExit('cuInit failed: %s: %s (%d)' % (n.value, s.value, rc) if rc else 'cuInit ok')"
run stub_symlink_program env LD_LIBRARY_PATH="$work/stubdir:/usr/local/cuda/lib64/stubs" "$doctor" explain -- "$work/alloc"
run oom_torch "$doctor" explain -- python3 -c "import torch; x = torch.empty(200 * 2**30, dtype=torch.uint8, device='cuda')"
run oom_torch_json "$doctor" explain --json --findings-exit -- python3 -c "import torch; x = torch.empty(200 * 2**30, dtype=torch.uint8, device='cuda')"
rm -rf "$work"
