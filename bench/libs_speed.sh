#!/bin/bash
# `cuda-doctor libs ONE_FILE` wall time against the issue's target (≤ 30 ms for libtorch_cuda.so
# with all the wheels' libraries), and `ldd` on the same file, in one run. Median of RUNS (default
# 20) after 3 warm-ups, with hyperfine when installed, else a loop of date +%s%N.
#   bench/libs_speed.sh [cuda-doctor] [FILE…]
# Default files: libcudart.so.13 and libcublas.so.13 of /usr/local/cuda/lib64, and each Python's
# torch/lib/libtorch_cuda.so (python3 on PATH, PY=…, /opt/torch/.venv).
set -u
CD=${1:-build/cuda-doctor}; shift || true
RUNS=${RUNS:-20}
TARGET_MS=${TARGET_MS:-30}
FILES=("$@")
if [ ${#FILES[@]} -eq 0 ]; then
  for f in /usr/local/cuda/lib64/libcudart.so.13 /usr/local/cuda/lib64/libcublas.so.13; do [ -f "$f" ] && FILES+=("$f"); done
  for py in ${PY:-} python3 /opt/torch/.venv/bin/python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    t=$("$py" -c 'import importlib.util as u, os; s = u.find_spec("torch"); print(os.path.join(os.path.dirname(s.origin), "lib/libtorch_cuda.so") if s else "")' 2>/dev/null)
    [ -n "$t" ] && [ -f "$t" ] && FILES+=("$t")
  done
fi
median_ms() {  # command… → median wall ms of RUNS runs and, with hyperfine, the mean user+sys ms
  if command -v hyperfine >/dev/null 2>&1; then
    local j; j=$(mktemp)
    hyperfine -N -w 3 -r "$RUNS" --export-json "$j" "$(printf '%q ' "$@")" >/dev/null 2>&1
    python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["results"][0]; print(round(r["median"]*1000, 1), round((r["user"]+r["system"])*1000, 1))' "$j"
    rm -f "$j"
  else
    local ts=() i s
    for i in 1 2 3; do "$@" >/dev/null 2>&1; done
    for ((i = 0; i < RUNS; i++)); do s=$(date +%s%N); "$@" >/dev/null 2>&1; ts+=($(( ($(date +%s%N) - s) / 100000 ))); done
    printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f\n", a[int((NR+1)/2)]/10}'
  fi
}
echo "machine: $(uname -srm), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs each, median"
fail=0
for f in "${FILES[@]}"; do
  read -r lib lib_cpu < <(median_ms "$CD" libs "$f")
  read -r ldd_ms ldd_cpu < <(median_ms ldd "$f")
  ok=$(awk -v a="$lib" -v t="$TARGET_MS" 'BEGIN {print (a <= t) ? "ok" : "OVER"}')
  [ "$ok" = ok ] || fail=1
  echo "libs $f: ${lib} ms ${lib_cpu:+(user+sys $lib_cpu ms) }(target ≤ ${TARGET_MS} ms: $ok)   ldd: ${ldd_ms} ms ${ldd_cpu:+(user+sys $ldd_cpu ms)}"
done
exit $fail
