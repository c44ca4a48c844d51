#!/bin/bash
# `cuda-doctor libs` against `ldd` on the same files, in one run: every shared library of a
# CUDA lib dir (default /usr/local/cuda/lib64) plus any pip wheels' nvidia/*/lib and torch/lib.
#   bench/libs_vs_ldd.sh [cuda-doctor] [DIR…]    (best of 5 wall-clock runs each)
CD=${1:-build/cuda-doctor}; shift
DIRS=("$@"); [ ${#DIRS[@]} -eq 0 ] && DIRS=(/usr/local/cuda/lib64 $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null | tr ' ' '\n' | while read d; do ls -d "$d"/nvidia/*/lib "$d"/torch/lib 2>/dev/null; done))
FILES=($(for d in "${DIRS[@]}"; do ls "$d"/*.so* 2>/dev/null; done | while read f; do [ -f "$f" ] && head -c4 "$f" | grep -q ELF && echo "$f"; done | sort -u))
best() { local b=999999; for _ in 1 2 3 4 5; do local s=$(date +%s%N); "$@" >/dev/null 2>&1; local e=$(( ($(date +%s%N) - s) / 1000000 )); [ $e -lt $b ] && b=$e; done; echo $b; }
echo "files: ${#FILES[@]} from ${DIRS[*]}"
echo "cuda-doctor libs (all files, one process): $(best "$CD" libs "${FILES[@]}") ms"
echo "ldd (one call per file):                   $(best bash -c 'for f; do ldd "$f"; done' _ "${FILES[@]}") ms"
BIG=$(ls -S "${FILES[@]}" | head -1)
echo "largest file $BIG ($(( $(stat -c %s "$BIG") / 1048576 )) MiB): cuda-doctor libs $(best "$CD" libs "$BIG") ms, ldd $(best ldd "$BIG") ms"
