#!/usr/bin/env bash
# Downloads Debian 12's real NVIDIA driver user-space packages (non-free: libcuda1,
# libnvidia-ml1 535.261.03) into ${XDG_CACHE_HOME:-~/.cache}/cuda-doctor-debs for
# tests/cli/driver_install_cli_test.cpp, which unpacks them (dpkg-deb -x) into a --root
# tree with no kernel module. Nothing is installed and the machine's apt configuration is
# not changed: apt gets its own lists directory. Sources: https://packages.debian.org/bookworm/libcuda1
set -euo pipefail
d=${XDG_CACHE_HOME:-$HOME/.cache}/cuda-doctor-debs
mkdir -p "$d/lists/partial" "$d/parts"
uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
uri=${uri:-http://deb.debian.org/debian}
printf 'Types: deb\nURIs: %s\nSuites: bookworm\nComponents: contrib non-free\nSigned-By: %s\n' \
  "$uri" /usr/share/keyrings/debian-archive-keyring.gpg >"$d/parts/nonfree.sources"
A=(-o Dir::Etc::sourcelist=/etc/apt/sources.list.d/debian.sources -o "Dir::Etc::sourceparts=$d/parts"
   -o "Dir::State::Lists=$d/lists")
apt-get "${A[@]}" update -qq
(cd "$d" && apt-get "${A[@]}" download libcuda1 libnvidia-ml1)
ls -l "$d"/*.deb
