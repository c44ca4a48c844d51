#!/bin/bash
# On a GPU machine (the H200, torch in /opt/torch/.venv): the environment reports users paste
# into bug reports, produced for real here, each given to `cuda-doctor explain --no-probe
# --json`, and the facts it parsed compared with what `cuda-doctor snapshot` probes live on the
# same machine; and the findings of `explain` on all reports together compared with `check`'s
# (issue 17 §3: "a report gets the findings check would give on that machine").
#   bench/explain_reports_h200.sh path/to/cuda-doctor     (writes under $OUT, default ./explain_reports_out)
# Bounded: every command has a timeout; about 1 minute in all. No network.
# Prints one line per report: MATCH or DIFF per fact (driver, CUDA, GPU 0 name and sm, torch
# version and CUDA, nvcc), then the finding ids of explain vs check (those a report can show).
set -u
CD=${1:?usage: explain_reports_h200.sh CUDA_DOCTOR}
OUT=${OUT:-./explain_reports_out}
mkdir -p "$OUT/reports"
PY=${PY:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
R=$OUT/reports
t() { timeout 120 "$@"; }

t "$PY" -m torch.utils.collect_env > "$R/collect_env.txt" 2>&1
t nvidia-smi > "$R/nvidia-smi.txt" 2>&1
t nvidia-smi -q > "$R/nvidia-smi-q.txt" 2>&1
t nvidia-smi topo -m > "$R/nvidia-smi-topo.txt" 2>&1
{ echo '$ nvcc --version'; t nvcc --version 2>&1 || t /usr/local/cuda/bin/nvcc --version 2>&1; } > "$R/nvcc.txt"
cat /proc/driver/nvidia/version > "$R/proc-driver-version.txt" 2>&1
t "$PY" -m pip list > "$R/pip-list.txt" 2>/dev/null
t "$PY" -m pip freeze > "$R/pip-freeze.txt" 2>/dev/null
TL=$("$PY" -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))' 2>/dev/null)
{ echo "\$ ldd $TL"; ldd "$TL"; } > "$R/ldd.txt" 2>&1
{ echo '$ python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.get_device_name(0), torch.cuda.get_arch_list())"'
  t "$PY" -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.get_device_name(0), torch.cuda.get_arch_list())"; } > "$R/python-c.txt" 2>&1
command -v ds_report >/dev/null && t ds_report > "$R/ds_report.txt" 2>&1
"$PY" -c 'import vllm' 2>/dev/null && t "$PY" -m vllm.collect_env > "$R/vllm-collect-env.txt" 2>&1
"$PY" -c 'import sglang' 2>/dev/null && t "$PY" -m sglang.check_env > "$R/sglang-check-env.txt" 2>&1
cat "$R"/*.txt > "$OUT/all-reports.md"

t "$CD" snapshot > "$OUT/live-facts.json" 2> "$OUT/snapshot.err"
t "$CD" check --json > "$OUT/check.json" 2> "$OUT/check.err"
for f in "$R"/*.txt "$OUT/all-reports.md"; do
  t "$CD" explain --no-probe --json "$f" > "${f%.*}.explain.json" 2> "${f%.*}.explain.err"
done

"$PY" - "$OUT" <<'PYEOF' | tee "$OUT/summary.txt"
import glob, json, os, sys
out = sys.argv[1]
live = json.load(open(f"{out}/live-facts.json"))
def facts_of(d):
    dr = d.get("driver", {}); g = (dr.get("gpus") or [{}])[0]
    py = [p for p in d.get("pythons", []) if p.get("torch", {}).get("version")]
    if py: py = [p for p in py if p.get("is_default")] or py
    t = py[0]["torch"] if py else {}
    tk = (d.get("toolkit", {}).get("toolkits") or [{}])[0]
    return {"driver": dr.get("nvml_driver_version") or dr.get("module_version"),
            "driver CUDA": dr.get("nvml_cuda_driver_version") or dr.get("cuda_driver_version"),
            "GPU 0": g.get("name"), "GPU 0 sm": (g.get("cc_major", 0) * 10 + g.get("cc_minor", 0)) or None,
            "torch": t.get("version"), "torch CUDA": t.get("cuda"), "nvcc": (tk.get("version") or "").split(".")[:2] or None}
want = facts_of(live)
print("live:", json.dumps(want))
for f in sorted(glob.glob(f"{out}/reports/*.explain.json")) + [f"{out}/all-reports.explain.json"]:
    try:
        d = json.load(open(f))
    except Exception as e:
        print(f"{os.path.basename(f)}: no JSON ({e})"); continue
    got = facts_of(d.get("report_facts", {}))
    cmp = [f"{k}={'MATCH' if got[k] == want[k] else 'DIFF(' + str(got[k]) + ')'}" for k in want if got[k] is not None]
    kinds = ",".join(sorted({r['kind'] for r in d.get('reports', [])})) or "none"
    print(f"{os.path.basename(f)}: reports [{kinds}] " + " ".join(cmp))
reportable = {"driver.too_old", "driver.minor_compat", "driver.library_mismatch", "arch.unsupported_by_framework",
              "arch.arch_list_mismatch", "device.hardware_fault", "device.busy_or_unavailable", "device.degraded_link",
              "framework.cpu_build", "framework.pins_conflict", "toolkit.version_mismatch", "libs.not_found",
              "driver.persistence_off"}
check = sorted({f["id"] for f in json.load(open(f"{out}/check.json"))["findings"] if f["id"] in reportable})
expl = sorted({f["id"] for f in json.load(open(f"{out}/all-reports.explain.json"))["findings"]})
print("check (ids a report can show):", check)
print("explain on all reports:        ", expl)
PYEOF
