#!/usr/bin/env python3
"""Compares `cuobjdump --list-elf` / `--list-ptx` listings with `cuda-doctor scan --json`.

usage: scan_compare.py LISTING SCAN_JSON
LISTING: blocks "== PATH" followed by cuobjdump's lines for that file.
Per file, the multiset of (ELF|PTX, arch) must match. cuobjdump drops the 'f' of
ELF entries in its list names and keeps 'a'; PTX names keep both (measured: cuobjdump of CUDA 13.0).
Exit 0 when every file agrees."""
import collections, json, re, sys

def read_listing(path):
    files, cur = {}, None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("== "):
            cur = files.setdefault(line[3:], collections.Counter())
            continue
        m = re.match(r"^(ELF|PTX) file\s+\d+: .*\.(sm_\d+[af]?)\.(cubin|ptx)$", line)
        if m and cur is not None:
            cur[(m.group(1), m.group(2))] += 1
    return files

def ours(binary, with_dispatch=False):
    c = collections.Counter()
    images = binary.get("images", []) + (binary.get("dispatch_images", []) if with_dispatch else [])
    for img in images:
        if img["kind"] == "sass":
            c[("ELF", "sm_%d%s" % (img["arch"], "a" if img["suffix"] == "a" else ""))] += img["count"]
        elif img["kind"] == "ptx":
            c[("PTX", "sm_%d%s" % (img["arch"], img["suffix"]))] += img["count"]
    return c

def main():
    listing = read_listing(sys.argv[1])
    scans = {b["path"]: b for b in json.load(open(sys.argv[2]))["binaries"]}
    agree, out = 0, []
    for path, theirs in sorted(listing.items()):
        b = scans.get(path)
        mine = ours(b) if b else collections.Counter()
        if mine == theirs:
            agree += 1
            out.append("ok    %s  %d ELF, %d PTX" % (path, sum(v for k, v in theirs.items() if k[0] == "ELF"),
                                                     sum(v for k, v in theirs.items() if k[0] == "PTX")))
        elif b and ours(b, True) == theirs:
            agree += 1
            out.append("ok    %s  (with the .ldata kernel table)" % path)
        else:
            diff = {"%s %s" % k: (mine.get(k, 0), theirs.get(k, 0)) for k in set(mine) | set(theirs)
                    if mine.get(k, 0) != theirs.get(k, 0)}
            out.append("DIFF  %s  (ours, cuobjdump): %s" % (path, json.dumps(dict(sorted(diff.items())))))
    print("\n".join(out))
    print("%d of %d files agree with cuobjdump" % (agree, len(listing)))
    return 0 if agree == len(listing) else 1

if __name__ == "__main__":
    sys.exit(main())
