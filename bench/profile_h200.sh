#!/usr/bin/env bash
# Where the time of `ps`, `use` and a cold `check` goes on the device machine (issues 16, 13, 19).
# The device has no strace or perf: wall-clock medians of each piece, NVML call by call from
# ctypes (fresh process each time, as ps's child is), and CUDA_DOCTOR_TRACE marks (each mark
# says what the process had read so far). Usage on the device (root):
#   OUT=$OUT bash bench/profile_h200.sh BINARY [OLD_BINARY]
# Writes $OUT/timings.txt, nvml_calls.txt, traces.txt, cold.txt.
set -u
doctor=$(readlink -f "${1:?usage: profile_h200.sh BINARY [OLD]}")
old=${2:+$(readlink -f "$2")}
out=${OUT:-/tmp/profile}
mkdir -p "$out"
export NO_COLOR=1
cd "$(dirname "$0")/.." || exit 1

{ date -u; uname -r; nproc; nvidia-smi -L; cat /sys/block/*/queue/read_ahead_kb 2>/dev/null | head -3; mount | grep -E ' / | /usr | /opt ' ; } >"$out/machine.txt" 2>&1

median() {  # N label cmd… → "median ms (min–max) label"
  python3 - "$@" <<'PY'
import subprocess, sys, time, statistics
n, label, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
ts = []
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ts.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(ts):8.2f} ms  ({min(ts):.2f}–{max(ts):.2f}, n={n})  {label}")
PY
}

timings() {  # BINARY LABEL
  local d=$1 l=$2
  median 15 "$l --version" "$d" --version
  median 15 "$l __driver --nvml-first" "$d" __driver --nvml-first
  median 15 "$l ps" "$d" ps
  median 15 "$l ps --json" "$d" ps --json
  median 15 "$l use 13.0" env HOME=/tmp PATH=/usr/bin:/bin "$d" use 13.0
  median 15 "$l use --off" env HOME=/tmp PATH=/usr/local/cuda-13.0/bin:/usr/bin:/bin _CUDA_DOCTOR_SAVED_PATH=/usr/bin:/bin "$d" use --off
  median 5 "$l check (warm)" "$d" check
}
{
  median 15 "true" true
  median 15 "nvidia-smi --query-compute-apps" nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
  median 15 "nvidia-smi -L" nvidia-smi -L
  median 15 "nvidia-smi --query-gpu=memory" nvidia-smi --query-gpu=memory.total,memory.used --format=csv,noheader
  timings "$doctor" new
  [ -n "$old" ] && timings "$old" old
  median 15 "new ps (again)" "$doctor" ps
  median 15 "nvidia-smi --query-compute-apps (again)" nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
} >"$out/timings.txt" 2>&1

# NVML call by call, each in a fresh process (what ps's child pays), 7 runs, median per call.
python3 - >"$out/nvml_calls.txt" 2>&1 <<'PY'
import subprocess, sys, json, statistics
code = r'''
import ctypes, time, json
t = {}
def tm(name, f, *a):
    s = time.perf_counter(); r = f(*a); t[name] = (time.perf_counter() - s) * 1000; return r
s = time.perf_counter(); lib = ctypes.CDLL("libnvidia-ml.so.1"); t["dlopen"] = (time.perf_counter() - s) * 1000
tm("nvmlInit_v2", lib.nvmlInit_v2)
n = ctypes.c_uint(); tm("DeviceGetCount_v2", lib.nvmlDeviceGetCount_v2, ctypes.byref(n))
h = ctypes.c_void_p(); tm("GetHandleByIndex_v2", lib.nvmlDeviceGetHandleByIndex_v2, 0, ctypes.byref(h))
buf = ctypes.create_string_buffer(256)
tm("SystemGetDriverVersion", lib.nvmlSystemGetDriverVersion, buf, 256)
c = ctypes.c_int(); tm("SystemGetCudaDriverVersion_v2", lib.nvmlSystemGetCudaDriverVersion_v2, ctypes.byref(c))
tm("GetName", lib.nvmlDeviceGetName, h, buf, 256)
tm("GetUUID", lib.nvmlDeviceGetUUID, h, buf, 256)
pci = ctypes.create_string_buffer(256); tm("GetPciInfo_v3", lib.nvmlDeviceGetPciInfo_v3, h, pci)
a = ctypes.c_int(); b = ctypes.c_int(); tm("GetCudaComputeCapability", lib.nvmlDeviceGetCudaComputeCapability, h, ctypes.byref(a), ctypes.byref(b))
mem = (ctypes.c_ulonglong * 5)(); mem[0] = (2 << 24) | 40
tm("GetMemoryInfo_v2", lib.nvmlDeviceGetMemoryInfo_v2, h, mem)
u = ctypes.c_uint(); v = ctypes.c_uint(); w = ctypes.c_uint(); x = ctypes.c_uint()
tm("GetPersistenceMode", lib.nvmlDeviceGetPersistenceMode, h, ctypes.byref(u))
tm("GetComputeMode", lib.nvmlDeviceGetComputeMode, h, ctypes.byref(u))
tm("GetMigMode", lib.nvmlDeviceGetMigMode, h, ctypes.byref(u), ctypes.byref(v))
e = ctypes.c_ulonglong()
tm("GetTotalEccErrors(unc)", lib.nvmlDeviceGetTotalEccErrors, h, 1, 0, ctypes.byref(e))
tm("GetTotalEccErrors(corr)", lib.nvmlDeviceGetTotalEccErrors, h, 0, 0, ctypes.byref(e))
tm("GetRetiredPagesPendingStatus", lib.nvmlDeviceGetRetiredPagesPendingStatus, h, ctypes.byref(u))
tm("GetRemappedRows", lib.nvmlDeviceGetRemappedRows, h, ctypes.byref(u), ctypes.byref(v), ctypes.byref(w), ctypes.byref(x))
tm("GetCurrPcieLinkGeneration", lib.nvmlDeviceGetCurrPcieLinkGeneration, h, ctypes.byref(u))
tm("GetMaxPcieLinkGeneration", lib.nvmlDeviceGetMaxPcieLinkGeneration, h, ctypes.byref(u))
tm("GetCurrPcieLinkWidth", lib.nvmlDeviceGetCurrPcieLinkWidth, h, ctypes.byref(u))
tm("GetMaxPcieLinkWidth", lib.nvmlDeviceGetMaxPcieLinkWidth, h, ctypes.byref(u))
cnt = ctypes.c_uint(0); procs = (ctypes.c_ubyte * 2400)()
tm("GetComputeRunningProcesses_v3(count)", lib.nvmlDeviceGetComputeRunningProcesses_v3, h, ctypes.byref(cnt), None)
cnt.value = 100; tm("GetComputeRunningProcesses_v3", lib.nvmlDeviceGetComputeRunningProcesses_v3, h, ctypes.byref(cnt), procs)
cnt.value = 100; tm("GetGraphicsRunningProcesses_v3", lib.nvmlDeviceGetGraphicsRunningProcesses_v3, h, ctypes.byref(cnt), procs)
cnt.value = 0; tm("GetProcessUtilization(count)", lib.nvmlDeviceGetProcessUtilization, h, None, ctypes.byref(cnt), ctypes.c_ulonglong(0))
tm("nvmlShutdown", lib.nvmlShutdown)
s = time.perf_counter(); lib2 = ctypes.CDLL("libnvidia-ml.so.1"); 
tm("nvmlInitWithFlags(NO_GPUS)", lib.nvmlInitWithFlags, 1)
tm("nvmlShutdown(2)", lib.nvmlShutdown)
tm("nvmlInitWithFlags(NO_ATTACH)", lib.nvmlInitWithFlags, 2)
tm("DeviceGetCount(no attach)", lib.nvmlDeviceGetCount_v2, ctypes.byref(n))
r = tm("GetHandleByIndex(no attach)", lib.nvmlDeviceGetHandleByIndex_v2, 0, ctypes.byref(h))
t["GetHandleByIndex(no attach) rc"] = r
r = tm("GetMemoryInfo_v2(no attach)", lib.nvmlDeviceGetMemoryInfo_v2, h, mem); t["GetMemoryInfo_v2(no attach) rc"] = r
cnt.value = 100; r = tm("GetComputeRunningProcesses_v3(no attach)", lib.nvmlDeviceGetComputeRunningProcesses_v3, h, ctypes.byref(cnt), procs); t["procs(no attach) rc"] = r
tm("nvmlShutdown(3)", lib.nvmlShutdown)
print(json.dumps(t))
'''
runs = []
for _ in range(7):
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    try: runs.append(json.loads(p.stdout))
    except Exception: print("run failed:", p.stdout, p.stderr[-2000:])
if runs:
    for k in runs[0]:
        vals = [r[k] for r in runs if k in r]
        print(f"{statistics.median(vals):9.3f}  (min {min(vals):.3f}, max {max(vals):.3f})  {k}")
PY

# Traces: ps, use, check --no-scan (warm), each twice; the second is the steady state.
{
  for cmd in "ps" "use 13.0" "check --no-scan" "check"; do
    for i in 1 2; do
      echo "## $cmd (run $i)"
      rm -f "$out/t.tmp"
      CUDA_DOCTOR_TRACE="$out/t.tmp" HOME=/tmp $doctor $cmd >/dev/null 2>&1
      cat "$out/t.tmp"
    done
  done
} >"$out/traces.txt" 2>&1
rm -f "$out/t.tmp"

# Cold: drop the page cache before each run (root there).
cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
{
  for i in 1 2 3; do cold; /usr/bin/time -f "%e s wall %U user %S sys %F majfl %R minfl %I blocks %w waits %c ctxsw" $doctor --version >/dev/null; done 2>&1 | sed 's/^/cold --version: /'
  for i in 1 2 3; do cold; /usr/bin/time -f "%e s wall %U user %S sys %F majfl %I blocks" $doctor check --no-scan >/dev/null; done 2>&1 | sed 's/^/cold check --no-scan: /'
  for i in 1 2 3; do cold; /usr/bin/time -f "%e s wall %U user %S sys %F majfl %I blocks" $doctor check >/dev/null; done 2>&1 | sed 's/^/cold check: /'
  cold; rm -f "$out/t.tmp"; CUDA_DOCTOR_TRACE="$out/t.tmp" $doctor check >/dev/null 2>&1; echo "## cold check trace"; cat "$out/t.tmp"
  for i in 1 2; do cold; rm -f "$out/t.tmp"; CUDA_DOCTOR_TRACE="$out/t.tmp" $doctor scan /opt /usr/local/cuda-13.0 >/dev/null 2>&1; echo "## cold scan trace $i"; cat "$out/t.tmp"; done
  if [ -n "$old" ]; then for i in 1 2 3; do cold; /usr/bin/time -f "%e s wall %U user %S sys %F majfl %I blocks" $old check >/dev/null; done 2>&1 | sed 's/^/old cold check: /'; fi
} >"$out/cold.txt" 2>&1
rm -f "$out/t.tmp"
ls -la "$out"
