#!/bin/bash
# When each CUDA library of a torch process is loaded (issue 15, `libs`' "loads" field): a python
# that imports torch, asks cudnn.version(), inits CUDA, runs a convolution and compiles a kernel
# with NVRTC, under LD_DEBUG=libs,files with a marker between steps; and a C program that
# dlopens the wheel's libcudnn.so.9 and calls cudnnGetVersion, then cudnnCreate. The trace says
# which object dlopened which library at which step, and how it was searched.
#   OUT=dir bash bench/libs_lazy.sh        (on the device machine; python3 holds torch)
set -u
OUT=${OUT:-./libs_lazy_out}
mkdir -p "$OUT"
PY=${PY:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
SP=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
{ echo "python: $PY"; echo "site-packages: $SP"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  "$PY" -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())' 2>&1
  ls "$SP"/nvidia/*/lib 2>&1 | grep -i "nvrtc\|cudnn\|^/" 
  readelf -d "$SP/torch/lib/libtorch_cuda.so" | grep -i "path\|needed" 
  for f in "$SP"/nvidia/*/lib/libnvrtc.so.* "$SP"/nvidia/*/lib/libcudnn.so.9 "$SP"/nvidia/*/lib/libcudnn_graph.so.9; do
    echo "== $f"; readelf -d "$f" | grep -i "path\|soname\|needed"; done
  sed -n '/def _preload_cuda_deps/,/^def /p' "$SP/torch/__init__.py" | head -80; } > "$OUT/env.txt" 2>&1

keep='MARK|dynamically loaded by|needed by|find library=|search path=|search cache|trying file=|^.*(exception|error)'
LD_DEBUG=libs,files "$PY" - > "$OUT/torch.out.txt" 2> "$OUT/torch.trace.full" <<'PYEOF'
import os
def mark(s): os.write(2, ("MARK " + s + "\n").encode())
mark("import torch")
import torch
mark("cudnn.version")
print("cudnn.version", torch.backends.cudnn.version())
mark("cuda init")
x = torch.randn(1, 3, 32, 32, device="cuda"); torch.cuda.synchronize()
mark("conv2d")
y = torch.nn.functional.conv2d(x, torch.randn(4, 3, 3, 3, device="cuda")); torch.cuda.synchronize()
print("conv ok", tuple(y.shape))
mark("second conv (other shape)")
y = torch.nn.functional.conv2d(torch.randn(8, 16, 64, 64, device="cuda"), torch.randn(32, 16, 5, 5, device="cuda")); torch.cuda.synchronize()
mark("conv backward")
w = torch.randn(4, 3, 3, 3, device="cuda", requires_grad=True)
torch.nn.functional.conv2d(x, w).sum().backward(); torch.cuda.synchronize()
mark("jiterator (NVRTC compile)")
try:
    f = torch.cuda.jiterator._create_jit_fn("template <typename T> T f(T x) { return x * 2; }")
    print("jiterator", f(torch.ones(4, device="cuda")).tolist())
except Exception as e:
    print("jiterator failed:", e)
mark("end")
maps = sorted({l.split()[-1] for l in open("/proc/self/maps") if "/" in l and (".so" in l)})
print("\n".join("mapped " + m for m in maps if any(k in m for k in ("cudnn", "nvrtc", "cublas", "cudart", "nccl", "cufft", "curand", "cusolver", "cusparse", "nvJitLink", "cupti"))))
PYEOF
grep -E "$keep" "$OUT/torch.trace.full" | grep -v "search path=.*(system search path)" > "$OUT/torch.trace.txt"
rm -f "$OUT/torch.trace.full"

CUDNN=$(ls "$SP"/nvidia/cudnn/lib/libcudnn.so.9 2>/dev/null | head -1)
cat > "$OUT/cudnn.c" <<'CEOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stddef.h>
int main(int c, char** v) {
  void* h = dlopen(v[1], RTLD_NOW); if (!h) { printf("dlopen: %s\n", dlerror()); return 2; }
  fprintf(stderr, "MARK cudnnGetVersion\n");
  size_t (*gv)(void) = (size_t (*)(void))dlsym(h, "cudnnGetVersion"); printf("version %zu\n", gv());
  fprintf(stderr, "MARK cudnnCreate\n");
  int (*cr)(void**) = (int (*)(void**))dlsym(h, "cudnnCreate"); void* hd = 0; printf("create %d\n", cr(&hd));
  fprintf(stderr, "MARK end\n");
  return 0; }
CEOF
gcc -o "$OUT/cudnn_prog" "$OUT/cudnn.c" -ldl 2>"$OUT/cudnn.gcc.txt" && \
  LD_DEBUG=libs "$OUT/cudnn_prog" "$CUDNN" > "$OUT/cudnn.out.txt" 2> "$OUT/cudnn.trace.full"
grep -E "$keep" "$OUT/cudnn.trace.full" 2>/dev/null | grep -v "(system search path)" > "$OUT/cudnn.trace.txt"
rm -f "$OUT/cudnn.trace.full" "$OUT/cudnn_prog"
tar czf "$OUT/lazy.tgz" -C "$OUT" env.txt torch.out.txt torch.trace.txt cudnn.out.txt cudnn.trace.txt cudnn.gcc.txt 2>/dev/null
grep -E "MARK|dynamically loaded by|needed by" "$OUT/torch.trace.txt" | grep -E "MARK|cudnn|nvrtc|cublas|cudart|nccl|cufft|curand|cusolver|cusparse|nvJitLink|cupti" | head -80
grep -E "MARK|dynamically loaded by|find library=libcudnn" "$OUT/cudnn.trace.txt" | head -40
cat "$OUT/cudnn.out.txt" "$OUT/torch.out.txt"
