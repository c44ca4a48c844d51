#!/usr/bin/env python3
"""Issue 19: where the headers a member walk needs lie in a static archive's members.

binary/prefetch asks the disk for the first and the last KiB of every member the symbol table
lists before walking them (ask_ends). This says, for each archive given, how often that guess
holds: the section headers and their names within the member's last HEAD KiB, the first
fatbin container header within its first HEAD KiB.
  python3 bench/archive_layout.py [--kib 8] ARCHIVE...
"""
import struct
import sys


def members(data):
    p = 8
    while p + 60 <= len(data):
        name = data[p:p + 16].decode("latin-1").strip()
        size = int(data[p + 48:p + 58].decode("latin-1").strip() or 0)
        yield name, p + 60, size
        p += 60 + size + (size & 1)


def layout(data, at, size, window):
    b = data[at:at + size]
    if b[:4] != b"\x7fELF" or b[4] != 2:
        return None
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    end = shoff + shnum * shentsize
    names_off, names_size = struct.unpack_from("<QQ", b, shoff + shstrndx * shentsize + 0x18)
    first = min(names_off, shoff)
    fatbin = None
    for i in range(shnum):
        sh = shoff + i * shentsize
        nm, = struct.unpack_from("<I", b, sh)
        off, = struct.unpack_from("<Q", b, sh + 0x18)
        n = b[names_off + nm:b.index(b"\0", names_off + nm)]
        if n == b".nv_fatbin":
            fatbin = off
    return {
        "tail": end == size and size - first <= window,
        "shdr_bytes": shnum * shentsize,
        "fatbin": fatbin,
        "fatbin_in_head": fatbin is not None and fatbin + 96 <= window,
    }


def main():
    args = sys.argv[1:]
    kib = 8
    if args[:1] == ["--kib"]:
        kib, args = int(args[1]), args[2:]
    window = kib << 10
    for path in args:
        data = open(path, "rb").read()
        n = tail = with_fatbin = head = 0
        big = []
        for name, at, size in members(data):
            if name in ("/", "//", "/SYM64/"):
                continue
            r = layout(data, at, size, window)
            if r is None:
                continue
            n += 1
            tail += r["tail"]
            big.append(r["shdr_bytes"])
            if r["fatbin"] is not None:
                with_fatbin += 1
                head += r["fatbin_in_head"]
        big.sort()
        q = lambda f: big[min(len(big) - 1, int(len(big) * f))] if big else 0
        print(f"{path}: {n} ELF members; names+section headers in the last {kib} KiB: {tail}; "
              f"section header bytes median {q(0.5)}, p90 {q(0.9)}, max {q(1.0) if big else 0}; "
              f"with .nv_fatbin: {with_fatbin}, its first container in the first {kib} KiB: {head}")


if __name__ == "__main__":
    main()
