#!/usr/bin/env bash
# verify/bench on the H200 device machine, next to torch references, in one run.
# Usage (device tool): bash bench/verify_h200.sh   (expects .devout/cuda-doctor; writes to $OUT)
# Measures: `verify --quick` and full `verify` wall time; verify's device-to-device bandwidth
# vs a torch D2D copy (read + write counted for both); verify's bf16 8192^3 GEMM vs torch.matmul.
set -u
OUT=${OUT:-/tmp/verify_out}
mkdir -p "$OUT"
CD=${CD:-.devout/cuda-doctor}
PY=${PY:-/opt/torch/.venv/bin/python3}
export NCCL_NVLS_ENABLE=0

{
  date -u; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
  echo "--- verify --quick"
  s=$(date +%s.%N); $CD verify --quick --no-color; rc=$?; e=$(date +%s.%N)
  echo "rc=$rc wall_s=$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.2f", b-a}')"
  echo "--- verify (full)"
  s=$(date +%s.%N); CD_VERIFY_COPY_TRIALS=1 $CD verify --no-color; rc=$?; e=$(date +%s.%N)
  echo "rc=$rc wall_s=$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.2f", b-a}')"
} > "$OUT/verify.txt" 2>&1

$CD bench --json > "$OUT/bench.json" 2> "$OUT/bench.err"

"$PY" - > "$OUT/torch_ref.txt" 2>&1 <<'PYEOF'
import torch, time
dev = "cuda:0"
def timed(fn, iters, warm):
    for _ in range(warm): fn()
    torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(iters): fn()
    e.record(); e.synchronize()
    return s.elapsed_time(e) / 1e3 / iters
n = (2 << 30) // 4
x = torch.empty(n, dtype=torch.float32, device=dev).uniform_()
y = torch.empty_like(x)
t = timed(lambda: y.copy_(x), 20, 3)
print("torch D2D copy 2 GiB: %.0f GB/s (read + write counted)" % (2 * n * 4 / t / 1e9))
for dt, name in ((torch.bfloat16, "bf16"), (torch.float16, "fp16")):
    a = torch.randn(8192, 8192, device=dev, dtype=dt); b = torch.randn(8192, 8192, device=dev, dtype=dt)
    t = timed(lambda: a @ b, 30, 5)
    print("torch.matmul %s 8192^3: %.0f TFLOP/s" % (name, 2 * 8192**3 / t / 1e12))
print("torch", torch.__version__, "cuda", torch.version.cuda)
PYEOF
cat "$OUT/verify.txt" "$OUT/torch_ref.txt"
