#!/usr/bin/env python3
"""bench/disk_speed.py FILE [BLOCK:QD:N …] — what the disk under FILE serves right now (issue 19).

Per spec: N reads of BLOCK bytes at distinct random BLOCK-aligned offsets of FILE (fewer where FILE
has fewer blocks), QD of them in flight (Python threads, pread, POSIX_FADV_RANDOM), from a cold
cache: `drop_caches` where allowed (root), else FILE's pages evicted with POSIX_FADV_DONTNEED. Prints reads/s, MiB/s and latency.
The device machine's disk is not one speed: the same host kind served 65k or 51k 4 KiB reads/s
and 1.5 or 0.77 GiB/s five minutes apart, so cold timings are reported beside this.
Default specs: 4 KiB at QD 1/4/16/64/256, 128 KiB at QD 1/16/64, 1 MiB at QD 16/64.
"""
import os
import random
import sys
import threading
import time

DEFAULT = ["4096:1:300", "4096:4:800", "4096:16:2000", "4096:64:4000", "4096:256:8000",
           "131072:1:100", "131072:16:800", "131072:64:1600", "1048576:16:400", "1048576:64:800"]


def cold(path):
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return
    except OSError:
        pass
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


def run(path, block, qd, n, seed):
    size = os.path.getsize(path)
    if size <= block:
        return f"{block >> 10:4} KiB reads: {path} is too small"
    cold(path)
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    # Distinct blocks (no read may hit a page an earlier one brought in): at most the file's count.
    n = min(n, size // block)
    offs = iter([b * block for b in random.Random(seed).sample(range(size // block), n)])
    lat, lock = [], threading.Lock()

    def worker():
        while True:
            with lock:
                o = next(offs, None)
            if o is None:
                return
            t = time.perf_counter()
            os.pread(fd, block, o)
            d = time.perf_counter() - t
            with lock:
                lat.append(d)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(qd)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    os.close(fd)
    lat.sort()
    return (f"{block >> 10:4} KiB reads, {qd:3} in flight: {n / wall:8.0f} reads/s  {n * block / wall / 2**20:7.1f} MiB/s"
            f"  latency median {lat[len(lat) // 2] * 1e3:.2f} ms, p90 {lat[len(lat) * 9 // 10] * 1e3:.2f} ms")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: disk_speed.py FILE [BLOCK:QD:N …]")
    path = sys.argv[1]
    if not os.path.isfile(path):
        sys.exit(f"disk_speed.py: {path}: not a regular file")
    for i, spec in enumerate(sys.argv[2:] or DEFAULT):
        block, qd, n = (int(x) for x in spec.split(":"))
        print(run(path, block, qd, n, i), flush=True)


if __name__ == "__main__":
    main()
