#!/usr/bin/env python3
"""numpy's top-k on the array `cltopk bench --cpu` times, for comparison.

    cpu_peers_numpy.py TYPE K REPS FILE [smallest]

Prints "numpy.argpartition+sort SECONDS": the median of REPS runs (after one
warm-up) of np.argpartition at k followed by sorting the k positions by key
(the usual numpy top-k with positions).  Exits 3 when numpy is missing."""
import sys
import time

try:
    import numpy as np
except ImportError:
    sys.exit(3)

DT = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "u32": np.uint32,
      "i64": np.int64, "u64": np.uint64}


def main():
    t, k, reps, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    smallest = len(sys.argv) > 5 and sys.argv[5] == "smallest"
    a = np.fromfile(path, dtype=DT[t])
    n = a.size
    times = []
    for r in range(-1, max(reps, 1)):
        t0 = time.perf_counter()
        if smallest:
            idx = np.argpartition(a, k - 1)[:k] if k < n else np.arange(n)
            idx = idx[np.argsort(a[idx], kind="stable")]
        else:
            b = -a if a.dtype.kind == "f" else a
            if a.dtype.kind == "f":
                idx = np.argpartition(b, k - 1)[:k] if k < n else np.arange(n)
                idx = idx[np.argsort(b[idx], kind="stable")]
            else:
                idx = np.argpartition(a, n - k)[n - k:] if k < n else np.arange(n)
                idx = idx[np.argsort(a[idx], kind="stable")[::-1]]
        dt = time.perf_counter() - t0
        if r >= 0:
            times.append(dt)
    times.sort()
    m = len(times)
    med = times[m // 2] if m % 2 else (times[m // 2 - 1] + times[m // 2]) / 2
    print("numpy.argpartition+sort %.9g" % med)


main()
