#!/bin/bash
# On the H200 (torch 2.11+cu130): `cuda-doctor libs --python` and `libs --pid` against
# /proc/PID/maps of a python that imported torch and ran a convolution — plainly, and with
# LD_LIBRARY_PATH putting the system cuDNN/NCCL directory first (issue 15 "Done when"); and
# bench/libs_speed.sh: `libs libtorch_cuda.so` wall time against the 30 ms target (speed.txt).
#   bench/libs_h200.sh path/to/cuda-doctor      (writes under $OUT, default ./libs_h200_out)
set -u
CD=${1:?usage: libs_h200.sh CUDA_DOCTOR}
OUT=${OUT:-./libs_h200_out}
mkdir -p "$OUT"
PY=${PY:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
SYS=${SYS:-/usr/lib/x86_64-linux-gnu}
FAM='lib(cudart|cublas|cublasLt|cudnn[a-z_]*|nccl|cufft|curand|cusolver|cusparse|nvrtc|nvJitLink|cupti)[-.]'
{ echo "date: $(date -u +%FT%TZ)"; echo "python: $PY"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  "$PY" -c 'import torch; print("torch", torch.__version__)' 2>&1; ls -l "$SYS"/libcudnn*.so.9 "$SYS"/libnccl.so.2 2>&1; } > "$OUT/machine.txt"

run_mode() {  # $1 = name, $2 = LD_LIBRARY_PATH for the python ("" = as is)
  local name=$1 ldlp=$2 ready="$OUT/$1.ready" envflag=()
  rm -f "$ready"
  [ -n "$ldlp" ] && envflag=(--env "LD_LIBRARY_PATH=$ldlp")
  ( [ -n "$ldlp" ] && export LD_LIBRARY_PATH="$ldlp"
    exec "$PY" - "$ready" "$OUT/$name.maps" > "$OUT/$name.python.txt" 2>&1 <<'PYEOF'
import sys, time, traceback
ready, maps = sys.argv[1], sys.argv[2]
try:
    import torch
    print("import ok; cudnn.version()", torch.backends.cudnn.version())
    x = torch.randn(1, 3, 32, 32, device="cuda")
    y = torch.nn.functional.conv2d(x, torch.randn(4, 3, 3, 3, device="cuda"))
    torch.cuda.synchronize()
    print("conv ok", tuple(y.shape))
except Exception:
    traceback.print_exc()
open(maps, "w").write(open("/proc/self/maps").read())
open(ready, "w").write("1")
sys.stdout.flush()
time.sleep(60)
PYEOF
  ) &
  local pid=$!
  for _ in $(seq 600); do [ -f "$ready" ] && break; sleep 0.1; done
  "$CD" libs --python "$PY" "${envflag[@]}" > "$OUT/$name.libs-python.txt" 2>&1
  "$CD" libs --python "$PY" "${envflag[@]}" --json > "$OUT/$name.libs-python.json" 2>"$OUT/$name.libs-python.err"
  "$CD" libs --pid "$pid" > "$OUT/$name.libs-pid.txt" 2>&1
  "$CD" libs --pid "$pid" --json > "$OUT/$name.libs-pid.json" 2>"$OUT/$name.libs-pid.err"
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  # Library by library: the CUDA files really mapped vs libs --python and libs --pid.
  python3 - "$OUT/$name" "$FAM" > "$OUT/$name.compare.txt" <<'PYEOF'
import json, os, re, sys
base, fam = sys.argv[1], re.compile(sys.argv[2])
mapped = set()
for line in open(base + ".maps"):
    p = line.split(None, 5)[5].strip() if len(line.split(None, 5)) > 5 else ""
    if p.startswith("/") and fam.search(os.path.basename(p)):
        mapped.add(os.path.realpath(p))
def libs(path):
    try:
        j = json.load(open(path))
    except Exception as e:
        return None, str(e)
    return {os.path.realpath(l["realpath"] or l["path"]): l.get("loads", "") for l in j["processes"][0]["libraries"] if l["path"]}, \
           [f["id"] + " " + f["severity"] + ": " + f["title"] for f in j["findings"] if f["severity"] in ("error", "warning")]
# A predicted failure of the first cuDNN call (libs.cudnn_mismatch) means the libraries that call
# would load are never mapped: the prediction then is that they are missing, not there.
def first_call_fails(findings):
    return any(f.startswith("libs.cudnn_mismatch error") and "first cuDNN call fails" in f for f in findings)
# A library loaded at start or at a first call that the convolution makes must be mapped; one
# loaded only on demand (cuDNN's ops/cnn/adv, NVRTC's builtins) may be, or not: named, not
# counted as disagreement. Every mapped one must be predicted.
for what in ("libs-python", "libs-pid"):
    pred, findings = libs(base + "." + what + ".json")
    if pred is None:
        print(what, "unreadable:", findings); continue
    fails = first_call_fails(findings)
    late_cudnn = {p for p, w in pred.items() if w == "first_call" and "libcudnn" in os.path.basename(p)} if fails else set()
    early = {p for p, when in pred.items() if when in ("startup", "first_call", "")} - late_cudnn
    yes = lambda b: "yes" if b else "no"
    print(f"== {what}: {len(mapped)} mapped, {len(pred)} predicted")
    print("  startup ⊆ mapped:", yes({p for p, w in pred.items() if w in ("startup", "")} <= mapped))
    print("  first_call ⊆ mapped:", yes({p for p, w in pred.items() if w == "first_call"} - late_cudnn <= mapped),
          f"(cuDNN's first call predicted to fail: its {len(late_cudnn)} first-call libraries not required)" if fails else "")
    print("  mapped ⊆ predicted:", yes(mapped <= set(pred)))
    for p in sorted(mapped - set(pred)): print("  mapped, not predicted:", p)
    for p in sorted(set(pred) - mapped): print(f"  predicted, not mapped: {p} (loads: {pred[p] or '-'})")
    print("  agree:", yes(early <= mapped and mapped <= set(pred)))
    for f in findings: print("  finding:", f)
PYEOF
}

# Speed (issue 15 "Fast"): `libs libtorch_cuda.so` with the wheels' libraries ≤ 30 ms, with ldd beside it.
PY="$PY" RUNS=20 bash "$(dirname "$0")/libs_speed.sh" "$CD" > "$OUT/speed.txt" 2>&1

run_mode plain ""
run_mode ldlp "$SYS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cat "$OUT/machine.txt" "$OUT/speed.txt" "$OUT"/plain.python.txt "$OUT"/plain.compare.txt "$OUT"/ldlp.python.txt "$OUT"/ldlp.compare.txt
