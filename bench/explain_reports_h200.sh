#!/bin/bash
# On a GPU machine (the H200, torch in /opt/torch/.venv): the environment reports users paste
# into bug reports, produced for real here, each given to `cuda-doctor explain --no-probe
# --json`, and the facts it parsed compared with what `cuda-doctor snapshot` probes live on the
# same machine; and the findings of `explain` on all reports together compared with `check`'s
# (issue 17 §3: "a report gets the findings check would give on that machine").
#   bench/explain_reports_h200.sh path/to/cuda-doctor     (writes under $OUT, default ./explain_reports_out)
# Bounded: every command has a timeout; about 1 minute for the reports, then the three 1 GiB
# throughput runs (below). No network.
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
# The same table as bug reports get it from an 80-column terminal (cut at 80 columns) and from
# a tracker's or mail client's soft wrap at 72 (scripts/wrap_paste.py): their facts must MATCH
# the live ones like the whole table's.
"$PY" scripts/wrap_paste.py --hard 80 < "$R/nvidia-smi.txt" > "$R/nvidia-smi-wrapped80.txt"
"$PY" scripts/wrap_paste.py --words 72 < "$R/nvidia-smi.txt" > "$R/nvidia-smi-wordwrap72.txt"
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
            "torch": t.get("version"), "torch CUDA": t.get("cuda"),
            "nvcc": ".".join(tk["version"].split(".")[:2]) if tk.get("version") else None}
want = facts_of(live)
print("live:", json.dumps(want))
for f in sorted(glob.glob(f"{out}/reports/*.explain.json")) + [f"{out}/all-reports.explain.json"]:
    try:
        d = json.load(open(f))
    except Exception as e:
        print(f"{os.path.basename(f)}: no JSON ({e})"); continue
    got = facts_of(d.get("report_facts", {}))
    cmp = [f"{k}={'MATCH' if got[k] == want[k] else 'DIFF(' + str(got[k]) + ')'}" for k in want if got[k]]
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

# Throughput (issue 17: >= 200 MB/s on a 1 GB log, memory bounded) with the report readers
# in the path: 1 GiB logs made here and deleted afterwards, page cache warm, each run once:
#   plain   - a multi-rank training log (as bench/explain_throughput.sh), errors every 64 MiB
#   reports - the same with every report above pasted at its head (all parsed, then scanned)
#   hostile - the head is 4 MiB of report-shaped lines (pip freeze rows, nvidia-smi GPU rows,
#             "GPU n:" lines: the readers' worst case, every line a candidate), then the log
# Prints MiB/s, MB/s and peak RSS per log and PASS/FAIL against 200 MB/s.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$PY" - "$T" "$OUT/all-reports.md" <<'PYEOF'
import random, sys
d, reports = sys.argv[1], sys.argv[2]
random.seed(1)
lines = []
for i in range(9000):
    r, k = i % 8, random.random()
    if k < 0.6:
        lines.append(f"[rank{r}]: step {i} loss {random.random():.4f} lr 3.0e-04 grad_norm {random.random()*3:.3f}")
    elif k < 0.8:
        lines.append(f"\x1b[32mINFO\x1b[0m 2026-12-02 10:{i%60:02d}:00 trainer.py:{i%900}] epoch 3 iter {i}/100000 mem 61.2G")
    elif k < 0.9:
        lines.append(f"gpu-node:4242:{4300+r} [{r}] NCCL INFO comm 0x55d1c0 rank {r} nRanks 8 nNodes 1 localRank {r}")
    else:
        lines.append(f"Epoch 3:  {i%100}%|\u2588\u2588\u2588\u258f      | {i}/100000 [01:{i%60:02d}<22:10, 7.41it/s]")
block = "\n".join(lines) + "\n"
err = "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
open(f"{d}/block", "w").write(block)
open(f"{d}/errblock", "w").write(block + err)
# Every reader engaged: anchors followed by as many rows as its caps allow, over and over.
h, n = [], 0
while n < 4 << 20:
    chunk = ["PyTorch version: 2.4.0+cu121", "CUDA used to build PyTorch: 12.1", "GPU models and configuration:"]
    chunk += [f"GPU {g}: NVIDIA H200" for g in range(80)]
    chunk += ["", "Package    Version", "---------- -------"] + [f"pkg{n}-{k}    1.{k}.0" for k in range(100)]
    chunk += [""] + [f"pkg{n}_{k}==1.{k}.0" for k in range(100)]
    chunk += ["| NVIDIA-SMI 570.86.15    Driver Version: 570.86.15    CUDA Version: 12.8     |"]
    chunk += [f"|   {g}  NVIDIA H200   On  | 00000000:{g:02X}:00.0 Off |                    0 |" for g in range(80)]
    chunk += ["", "$ ldd libtorch_cuda.so"] + [f"\tlibcublas.so.{k} => not found" for k in range(100)]
    chunk += [">>> torch.cuda.get_arch_list()", "['sm_80', 'sm_90']", ""]
    h += chunk
    n += sum(len(s) + 1 for s in chunk)
open(f"{d}/hostile-head", "w").write("\n".join(h) + "\n")
PYEOF
blocks=$(( ${SIZE_MB:-1024} * 1048576 / $(stat -c %s "$T/block") ))  # SIZE_MB=64 for a quick try
body() { for ((i = 0; i < blocks; i++)); do if (( i % 64 == 63 )); then cat "$T/errblock"; else cat "$T/block"; fi; done; }
for kind in plain reports hostile; do
  case $kind in
    plain) body > "$T/log" ;;
    reports) { cat "$OUT/all-reports.md"; body; } > "$T/log" ;;
    hostile) { cat "$T/hostile-head"; body; } > "$T/log" ;;
  esac
  bytes=$(stat -c %s "$T/log")
  cat "$T/log" > /dev/null
  start=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$T/rss" timeout 60 "$CD" explain --no-probe --json "$T/log" > "$OUT/throughput-$kind.json" 2>/dev/null
  end=$(date +%s%N)
  ms=$(( (end - start) / 1000000 ))
  "$PY" - "$kind" "$bytes" "$ms" "$(tail -1 "$T/rss")" "$OUT/throughput-$kind.json" <<'PYEOF' | tee -a "$OUT/summary.txt"
import json, sys
kind, size, ms, rss, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
d = json.load(open(out))
mbs = size / 1e6 / (ms / 1000)
first = d["findings"][0]["id"] if d["findings"] else "-"
print(f"throughput {kind}: {size/2**20:.0f} MiB in {ms/1000:.2f} s = {size/2**20/(ms/1000):.0f} MiB/s ({mbs:.0f} MB/s), "
      f"peak RSS {rss/1024:.1f} MiB, {len(d.get('reports', []))} reports, first finding {first}: "
      f"{'PASS' if mbs >= 200 else 'FAIL'} (>= 200 MB/s)")
PYEOF
done
rm -f "$T/log"
