#!/usr/bin/env python3
"""bench/fatbin_reads.py SM DIR… — how many disk reads a cold scan of DIR's fatbins needs (issue 19).

Independent of cuda-doctor (the ELF and fatbin layouts are parsed here from
../docs/fatbin.md's description): for every ELF file with a .nv_fatbin section, walks
its containers and entry headers and counts the distinct 4 KiB pages those headers
lie on — the reads a cold scan cannot avoid when it reads every header — and the pages
it would read if each container's walk stopped at the first SASS entry that runs
natively on sm_SM. Prints per file (largest first) and totals, split by package
(nvidia/* wheels, the framework's own, everything else).
"""
import mmap
import os
import struct
import sys

PAGE = 4096
FATBIN_MAGIC = 0xBA55ED50


def sections(f):
    head = f.read(64)
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2:
        return {}
    shoff, = struct.unpack_from("<Q", head, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 0x3A)
    if not shoff or shentsize < 64 or shnum == 0:
        return {}
    f.seek(shoff)
    table = f.read(shentsize * shnum)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", table, i * shentsize) for i in range(shnum)]
    if shstrndx >= len(hdrs):
        return {}
    f.seek(hdrs[shstrndx][4])
    names = f.read(hdrs[shstrndx][5])
    out = {}
    for h in hdrs:
        end = names.find(b"\0", h[0])
        out[names[h[0]:end].decode(errors="replace")] = (h[4], h[5])  # offset, size
    return out


def walk(path, sm):
    """(containers, entries, pages_full, pages_early) for one file."""
    with open(path, "rb") as f:
        secs = sections(f)
        if ".nv_fatbin" not in secs:
            return None
        off, size = secs[".nv_fatbin"]
        # Mapped, random access: only the header pages are read (the payloads are most of the file).
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        m.madvise(mmap.MADV_RANDOM)
        data = memoryview(m)[off:off + size]
    full, early = set(), set()
    containers = entries = 0
    p = 0
    while p + 16 <= len(data):
        magic, _, hsize, fsize = struct.unpack_from("<IHHQ", data, p)
        if magic != FATBIN_MAGIC or hsize < 16:
            p = (p + 8) & ~7
            continue
        containers += 1
        page = (off + p) // PAGE
        full.add(page)
        early.add(page)
        q, end, stopped = p + hsize, min(p + hsize + fsize, len(data)), False
        while q + 64 <= end:
            kind, _, ehsize, payload = struct.unpack_from("<HHIQ", data, q)
            arch, = struct.unpack_from("<I", data, q + 0x1C)
            if ehsize < 64:
                break
            entries += 1
            page = (off + q) // PAGE
            full.add(page)
            if not stopped:
                early.add(page)
                if kind == 2 and arch == sm:
                    stopped = True
            q += ehsize + payload
        p = (end + 7) & ~7
    return containers, entries, len(full), len(early)


def package(path):
    parts = path.split("/")
    for i, part in enumerate(parts):
        if part in ("site-packages", "dist-packages") and i + 1 < len(parts):
            top = parts[i + 1]
            return "nvidia" if top == "nvidia" else top.removesuffix(".libs")
    return "other"


def main():
    sm = int(sys.argv[1])
    rows = []
    for top in sys.argv[2:]:
        for d, _, files in os.walk(top):
            for name in files:
                path = os.path.join(d, name)
                if not (name.endswith(".so") or ".so." in name) or os.path.islink(path):
                    continue
                try:
                    r = walk(path, sm)
                except (OSError, struct.error):
                    continue
                if r and r[0]:
                    rows.append((path, package(path)) + r)
    rows.sort(key=lambda r: -r[4])
    print(f"{'pages':>8} {'early':>8} {'contnrs':>8} {'entries':>8}  file")
    for path, pkg, c, e, full, early in rows[:25]:
        print(f"{full:8} {early:8} {c:8} {e:8}  {path}")
    totals = {}
    for _, pkg, c, e, full, early in rows:
        key = "nvidia/*" if pkg == "nvidia" else "framework" if pkg in ("torch", "jax_plugins", "jaxlib", "cupy",
                                                                              "cupy_backends") else "other"
        t = totals.setdefault(key, [0, 0, 0, 0, 0])
        for i, v in enumerate((1, c, e, full, early)):
            t[i] += v
    print()
    for key, (n, c, e, full, early) in sorted(totals.items()):
        print(f"{key:10} {n:5} files {c:7} containers {e:8} entries {full:8} pages ({full * 4 >> 10} MiB)"
              f" -> {early:8} stopping at sm_{sm} SASS")


if __name__ == "__main__":
    main()
