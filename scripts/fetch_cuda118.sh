#!/usr/bin/env bash
# Rebuilds .cuda118/cuda-11.8.tar.xz: a real CUDA 11.8 toolkit (nvcc, ptxas, cicc, fatbinary,
# nvlink, cudafe++, libdevice, the headers, libcudart) for the `use` / `toolkits` tests, taken
# from Debian 12's non-free packages nvidia-cuda-toolkit, nvidia-cuda-dev and libcudart11.0
# (11.8.89). It never changes the machine's apt configuration and installs nothing: apt gets
# its own sources and lists directory under the cache, `apt-get download` fetches the .deb
# files, `dpkg-deb -x` unpacks them into a scratch directory, and the files are rearranged into
# the /usr/local/cuda-11.8 layout. Downloads are cached (${XDG_CACHE_HOME:-~/.cache}/cuda-doctor-debs;
# nvidia-cuda-dev is ~770 MB). Exit 0 with the tarball, 1 when the packages cannot be reached.
#
#   scripts/fetch_cuda118.sh [OUT.tar.xz]     (default: .cuda118/cuda-11.8.tar.xz of this tree)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/.cuda118/cuda-11.8.tar.xz}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cuda-doctor-debs
packages=(nvidia-cuda-toolkit nvidia-cuda-dev libcudart11.0)

mkdir -p "$cache/lists/partial" "$cache/parts"
sources=/etc/apt/sources.list.d/debian.sources
uri=$(awk '/^URIs:/ {print $2; exit}' "$sources" 2>/dev/null || true)
if [ -z "$uri" ]; then
  uri=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
fi
[ -n "$uri" ] || { echo "fetch_cuda118: no Debian mirror in $sources or /etc/apt/sources.list" >&2; exit 1; }
printf 'Types: deb\nURIs: %s\nSuites: bookworm\nComponents: contrib non-free\nSigned-By: %s\n' \
  "$uri" /usr/share/keyrings/debian-archive-keyring.gpg > "$cache/parts/nonfree.sources"
A=(-o "Dir::Etc::sourcelist=$sources" -o "Dir::Etc::sourceparts=$cache/parts" -o "Dir::State::Lists=$cache/lists")

have_all() {
  for p in "${packages[@]}"; do ls "$cache/${p}"_11.8*_amd64.deb >/dev/null 2>&1 || return 1; done
}
if ! have_all; then
  if ! apt-get "${A[@]}" update -qq >/dev/null 2>&1; then
    echo "fetch_cuda118: cannot reach $uri (contrib non-free): no tarball made" >&2
    exit 1
  fi
  (cd "$cache" && apt-get "${A[@]}" download "${packages[@]}" >/dev/null) || {
    echo "fetch_cuda118: apt-get download ${packages[*]} failed" >&2
    exit 1
  }
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for p in "${packages[@]}"; do dpkg-deb -x "$(ls "$cache/${p}"_11.8*_amd64.deb | head -1)" "$scratch/deb"; done

# Debian's layout -> a toolkit directory: bin/ (nvcc and its helpers), nvvm/bin/cicc,
# nvvm/libdevice, include/, lib64/ (libcudart, the static runtime, the device runtime).
tk=$scratch/cuda-11.8
mkdir -p "$tk/bin" "$tk/nvvm/bin" "$tk/nvvm/libdevice" "$tk/include" "$tk/lib64"
for f in nvcc ptxas fatbinary nvlink cudafe++ bin2c; do
  src=$(find "$scratch/deb" -type f -name "$f" -perm -u+x | head -1)
  [ -n "$src" ] || { echo "fetch_cuda118: $f not found in ${packages[*]}" >&2; exit 1; }
  cp "$src" "$tk/bin/"
done
cp -r "$(dirname "$(find "$scratch/deb" -name link.stub | head -1)")" "$tk/bin/crt"
cp "$(find "$scratch/deb" -type f -name cicc | head -1)" "$tk/nvvm/bin/"
cp "$(find "$scratch/deb" -name 'libdevice.10.bc' | head -1)" "$tk/nvvm/libdevice/"
# Headers: nvidia-cuda-dev's /usr/include (only CUDA's: cuda.h, cuda_runtime.h, crt/, cublas…).
[ -f "$scratch/deb/usr/include/cuda_runtime.h" ] || { echo "fetch_cuda118: no usr/include/cuda_runtime.h in nvidia-cuda-dev" >&2; exit 1; }
cp -r "$scratch/deb/usr/include/." "$tk/include/"
for f in libcudart_static.a libcudadevrt.a; do cp "$(find "$scratch/deb" -name "$f" | head -1)" "$tk/lib64/"; done
so=$(find "$scratch/deb" -name 'libcudart.so.11.8.*' | head -1)
cp "$so" "$tk/lib64/"
ln -s "$(basename "$so")" "$tk/lib64/libcudart.so.11.0"
ln -s libcudart.so.11.0 "$tk/lib64/libcudart.so"
# nvcc finds its helpers through nvcc.profile (Debian's points at /usr/lib/nvidia-cuda-toolkit).
cat > "$tk/bin/nvcc.profile" <<'EOF'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF
"$tk/bin/nvcc" --version | grep -q 'release 11.8' || { echo "fetch_cuda118: the assembled nvcc does not run" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
XZ_OPT=${XZ_OPT:--9} tar -C "$scratch" -cJf "$out.tmp" cuda-11.8
mv "$out.tmp" "$out"
echo "fetch_cuda118: $out ($(du -h "$out" | cut -f1))"
