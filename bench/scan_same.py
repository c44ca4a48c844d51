#!/usr/bin/env python3
"""scan_same.py A.json B.json — do two `cuda-doctor scan --json` runs give the same answers?
Compares everything scan reports per file (kernel images with counts, container groups, notes,
the verdict per target). Prints "same (N files)" and exits 0, or the first differences and exits 1."""
import json, sys

def answers(path):
    # Everything scan says about a file: images, container groups, counts, notes, verdicts.
    # Not compared: same_build_as says how an answer was had (a copy of another file's), not what it is.
    doc = json.load(open(path))
    return {b.get("path"): json.dumps({k: v for k, v in b.items() if k != "same_build_as"}, sort_keys=True)
            for b in doc.get("binaries", [])}

a, b = answers(sys.argv[1]), answers(sys.argv[2])
diff = [p for p in sorted(set(a) | set(b)) if a.get(p) != b.get(p)]
if diff:
    print(f"DIFFERENT in {len(diff)} of {len(set(a) | set(b))} files, e.g. {diff[:3]}")
    sys.exit(1)
print(f"same ({len(a)} files)")
