#!/usr/bin/env python3
"""cltopk.topk against numpy.argpartition + sort and against the C library's own
timing, in one process (issue 16's targets for the Python package).

    python3 bench/vs_numpy.py [--log2n 25] [-k 64] [--device cpu] [--reps 11]

Prints the median wall time of each over --reps calls after one warm-up:
  cltopk.topk          the package's call (argument checks, output arrays, the C call)
  C cltopk_benchmark   the library's median of the same call, timed inside C
  numpy                np.argpartition(-x, k)[:k] then a stable sort of those k
and checks that cltopk gives numpy's k values and the exact positions (2^25
uniform float32 values have ties among the largest: those at the k-th value are
taken by smaller position).
"""
import argparse
import time

import numpy as np

import cltopk


def median_time(f, reps):
    f()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def numpy_topk(x, k):
    part = np.argpartition(x, x.size - k)[x.size - k:]
    # descending by value, ties by smaller index: the stable order of the k
    order = np.lexsort((part, -x[part].astype(np.float64)))
    return x[part[order]], part[order]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--log2n", type=int, default=25)
    ap.add_argument("-k", type=int, default=64)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--reps", type=int, default=11)
    args = ap.parse_args()
    x = np.random.default_rng(1).random(1 << args.log2n, dtype=np.float32)
    ctx = cltopk.Context(args.device)
    t_py = median_time(lambda: ctx.topk(x, args.k), args.reps)
    t_c, floor = ctx.benchmark(x, args.k, reps=args.reps)
    t_np = median_time(lambda: numpy_topk(x, args.k), max(3, args.reps // 4))
    v, i = ctx.topk(x, args.k)
    # the exact answer: numpy's k-th value, then every position at or above it in
    # the stable order (ties at the k-th value by smaller position: the one
    # argpartition keeps among them is arbitrary)
    nv, _ = numpy_topk(x, args.k)
    above = np.flatnonzero(x >= nv[-1])
    exact = above[np.lexsort((above, -x[above].astype(np.float64)))][:args.k]
    same = bool((i == exact).all() and (v == nv).all())
    print("n = 2^%d float32, k = %d, device %s (%s), %d reps"
          % (args.log2n, args.k, ctx.device_name, cltopk.cpu_isa(), args.reps))
    print("  cltopk.topk         %9.3f ms" % (t_py * 1e3))
    print("  C cltopk_benchmark  %9.3f ms   (read floor %.3f ms)" % (t_c * 1e3, floor * 1e3))
    print("  numpy argpartition  %9.3f ms" % (t_np * 1e3))
    print("  python / C          %9.2fx   (target <= 1.2x)" % (t_py / t_c))
    print("  numpy / python      %9.1fx   (target >= 20x)" % (t_np / t_py))
    print("  same answer         %s" % ("yes" if same else "NO"))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
