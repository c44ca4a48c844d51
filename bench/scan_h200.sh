#!/usr/bin/env bash
# `cuda-doctor scan` against cuobjdump on the H200 machine, in one run (issue 3):
#   bash bench/scan_h200.sh PATH/TO/cuda-doctor      (outputs under $OUT, default /tmp/scan-bench)
# 1. finds every shared library with a .nv_fatbin section (torch, nvidia-* wheels, jax, cupy,
#    torchvision in /opt; the toolkit's lib64; system cuDNN/NCCL),
# 2. lists them with cuobjdump --list-elf and --list-ptx (timed: the anchor loop) and
#    scans them with cuda-doctor (timed), and compares both listings per file,
# 3. times cuobjdump --list-elf vs cuda-doctor scan on libtorch_cuda.so,
# 4. builds an sm_75-only extension and shows scan (exit 2) and check report no_kernel_image.
set -uo pipefail
CD=$(realpath "${1:?usage: scan_h200.sh PATH/TO/cuda-doctor}")
OUT=${OUT:-/tmp/scan-bench}
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
TIMEFORMAT=%R
log() { echo "$*" | tee -a "$OUT/timings.txt"; }
secs() { local t; t=$( { time "$@" >/dev/null 2>&1; } 2>&1 ); echo "$t"; }

log "# scan bench on $(hostname), $(date -u +%FT%TZ)"
log "driver: $(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>/dev/null)"
log "cuobjdump: $(cuobjdump --version | tail -1)"

# 1. The fatbin-carrying libraries.
{ find /opt /usr/local/cuda/lib64/ -name '*.so*' -type f 2>/dev/null
  find /usr/lib/x86_64-linux-gnu -maxdepth 1 \( -name 'libcudnn*.so*' -o -name 'libnccl*.so*' \) -type f; } |
  sort -u | while read -r f; do readelf -SW "$f" 2>/dev/null | grep -q ' \.nv_fatbin ' && echo "$f"; done >"$OUT/files.txt"
mapfile -t FILES <"$OUT/files.txt"
TOTAL=$(du -cb "${FILES[@]}" | tail -1 | cut -f1)
log "files with .nv_fatbin: ${#FILES[@]} ($((TOTAL / 1000000)) MB)"

# 2. cuobjdump loop (the anchor: --list-elf + --list-ptx per file), then cuda-doctor on the same files.
listing() { for f in "${FILES[@]}"; do echo "== $f"; cuobjdump --list-elf "$f" 2>&1; cuobjdump --list-ptx "$f" 2>&1; done; }
T_LOOP=$( { time listing >"$OUT/cuobjdump_listing.txt"; } 2>&1 )
log "cuobjdump --list-elf + --list-ptx loop over ${#FILES[@]} files: ${T_LOOP} s"
"$CD" scan --json "${FILES[@]}" >"$OUT/scan.json"
echo "rc=$?" >>"$OUT/timings.txt"
T_SET=()
for i in 1 2 3; do T_SET+=("$(secs "$CD" scan --json "${FILES[@]}")"); done
log "cuda-doctor scan of the set (live GPU + driver probe), 3 runs: ${T_SET[*]} s"
T_SET_NOPROBE=$(secs "$CD" scan --json --gpu sm_90 --driver 580.159.04 "${FILES[@]}")
log "cuda-doctor scan of the set with --gpu/--driver (no driver probe): ${T_SET_NOPROBE} s"
"$CD" scan --no-color "${FILES[@]}" >"$OUT/scan_text.txt" 2>&1
python3 "$HERE/scan_compare.py" "$OUT/cuobjdump_listing.txt" "$OUT/scan.json" >"$OUT/compare.txt"
log "compare: $(tail -1 "$OUT/compare.txt")"

# 3. libtorch_cuda.so alone.
TORCH=$(grep -m1 '/libtorch_cuda.so$' "$OUT/files.txt")
T_CUO=$(secs cuobjdump --list-elf "$TORCH")
T_CD=()
for i in 1 2 3; do T_CD+=("$(secs "$CD" scan "$TORCH")"); done
T_CD_NOPROBE=$(secs "$CD" scan --gpu sm_90 --driver 580.159.04 "$TORCH")
log "libtorch_cuda.so ($(du -m "$TORCH" | cut -f1) MB): cuobjdump --list-elf ${T_CUO} s; cuda-doctor scan (live) ${T_CD[*]} s; with --gpu/--driver ${T_CD_NOPROBE} s"
python3 - "$T_LOOP" "${T_SET[1]}" "$T_CUO" "${T_CD[1]}" <<'PY' | tee -a "$OUT/timings.txt"
import sys
loop, cset, cuo, cd = map(float, sys.argv[1:])
print(f"speedup whole set: {loop / cset:.0f}x   libtorch_cuda.so: {cuo / cd:.0f}x   (second of three runs)")
PY

# 4. An extension built for sm_75 only.
EXT=/tmp/ext75 && rm -rf "$EXT" && mkdir -p "$EXT"
printf '__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\nvoid launch(float* x) { k<<<1, 1>>>(x); }\n' >"$EXT/ext75.cu"
/usr/local/cuda/bin/nvcc -gencode arch=compute_75,code=sm_75 -shared -Xcompiler -fPIC "$EXT/ext75.cu" -o "$EXT/libext75.so"
{ echo "\$ cuda-doctor scan --kernels $EXT/libext75.so"; "$CD" scan --no-color --kernels "$EXT/libext75.so"; echo "exit code: $?"; } >"$OUT/ext75.txt" 2>&1
/opt/torch/.venv/bin/python3 -m venv --without-pip "$EXT/venv"
SP=$(ls -d "$EXT"/venv/lib/python3*/site-packages)
mkdir -p "$SP/ext75" && cp "$EXT/libext75.so" "$SP/ext75/_C.so"
{ echo; echo "\$ VIRTUAL_ENV=$EXT/venv cuda-doctor check --json   (arch findings)";
  VIRTUAL_ENV="$EXT/venv" PATH="$EXT/venv/bin:$PATH" "$CD" check --json >"$EXT/check.json"; echo "exit code: $?";
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [print(f["severity"], f["id"], f["title"]) for f in d["findings"] if f["id"].startswith("arch.")]' "$EXT/check.json"; } >>"$OUT/ext75.txt" 2>&1
log "ext75: $(grep -c no_kernel_image "$OUT/ext75.txt") no_kernel_image lines; scan $(grep -m1 'exit code' "$OUT/ext75.txt")"
gzip -9 "$OUT/cuobjdump_listing.txt" "$OUT/scan.json"
