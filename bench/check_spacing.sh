#!/usr/bin/env bash
# How the gap between two `cuda-doctor check` runs changes the second one's time: a
# run's __driver child is torn down in the kernel after check exits, and a cuInit
# started meanwhile waits for it. Prints wall time, cuInit time and when the
# binaries probe finished, per run, for runs back to back and 0.5 s apart
# (CUDA_DOCTOR_TRACE marks). Usage on the device: bench/check_spacing.sh BINARY
set -uo pipefail
exec python3 - "${1:-build/cuda-doctor}" <<'PY'
import os, statistics, subprocess, sys, tempfile, time
doctor = sys.argv[1]
trace = os.path.join(tempfile.mkdtemp(), "trace.txt")

def one(gap):
    time.sleep(gap)
    if os.path.exists(trace):
        os.unlink(trace)
    t0 = time.perf_counter()
    subprocess.run([doctor, "check"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=dict(os.environ, CUDA_DOCTOR_TRACE=trace))
    wall = time.perf_counter() - t0
    marks = {}
    for line in open(trace):
        _, stamp, _, what = line.split(None, 3)
        marks.setdefault(what.split(" [read ")[0].strip(), float(stamp))
    return wall, marks.get("cuInit", 0) - marks.get("libcuda loaded", 0), marks.get("binaries", 0) - marks.get("check", 0)

for gap in (0.0, 0.5, 0.0, 0.5):
    runs = [one(gap) for _ in range(8)]
    print(f"gap {gap}: wall " + " ".join(f"{r[0]:.3f}" for r in runs) + f"  median {statistics.median(r[0] for r in runs):.3f}")
    print("        cuInit " + " ".join(f"{r[1]:.3f}" for r in runs))
    print("        binaries done at " + " ".join(f"{r[2]:.3f}" for r in runs))
PY
