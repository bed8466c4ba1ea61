#!/usr/bin/env python3
"""vs_faiss.py - cltopk_knn beside faiss IndexFlatL2 / IndexFlatIP on the same data.

Loads libcltopk.so with ctypes and faiss-cpu (PyPI `faiss-cpu`, a benchmark
peer only, never a dependency of the library), generates U(0,1) float32
queries and points with numpy, and reports the median time of each after a
warm-up, with the same number of threads (cltopk_set_threads and
faiss.omp_set_num_threads).  cltopk's answer is the exact fma definition
(cltopk.h); faiss computes |q|^2 + |p|^2 - 2 q.p by a matrix product, whose
rounding can swap near ties, so the agreement of the two index sets is
reported, not required.

    python3 bench/vs_faiss.py --lib .libs/libcltopk.so --nq 1000 --np 100000 --d 128 --k 10
"""
import argparse
import ctypes as C
import statistics
import sys
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", default=".libs/libcltopk.so")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--nq", type=int, default=1000)
    ap.add_argument("--np", type=int, default=100000)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--metric", default="l2", choices=["l2", "ip"])
    ap.add_argument("--threads", type=int, default=0, help="0: every core")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    import faiss

    lib = C.CDLL(a.lib)
    lib.cltopk_open.argtypes = [C.POINTER(C.c_void_p), C.c_char_p]
    lib.cltopk_last_error.restype = C.c_char_p
    lib.cltopk_last_error.argtypes = [C.c_void_p]
    lib.cltopk_set_threads.argtypes = [C.c_int]
    lib.cltopk_knn.argtypes = [C.c_void_p, C.c_int, C.c_void_p, C.c_size_t, C.c_void_p,
                               C.c_size_t, C.c_size_t, C.c_size_t, C.c_void_p, C.c_void_p]
    lib.cltopk_close.argtypes = [C.c_void_p]
    ctx = C.c_void_p()
    if lib.cltopk_open(C.byref(ctx), a.device.encode()) != 0:
        sys.exit("cltopk_open: %s" % lib.cltopk_last_error(None).decode())
    threads = a.threads
    if threads <= 0:
        import os
        threads = os.cpu_count() or 1
    lib.cltopk_set_threads(threads)
    faiss.omp_set_num_threads(threads)

    rng = np.random.default_rng(1)
    q = rng.random((a.nq, a.d), dtype=np.float32)
    p = rng.random((a.np, a.d), dtype=np.float32)
    metric = 0 if a.metric == "l2" else 1
    index = faiss.IndexFlatL2(a.d) if metric == 0 else faiss.IndexFlatIP(a.d)
    index.add(p)

    od = np.zeros((a.nq, a.k), dtype=np.float32)
    oi = np.zeros((a.nq, a.k), dtype=np.int64)

    def ours():
        st = lib.cltopk_knn(ctx, metric, q.ctypes.data, a.nq, p.ctypes.data, a.np, a.d, a.k,
                            od.ctypes.data, oi.ctypes.data)
        if st != 0:
            sys.exit("cltopk_knn: %s" % lib.cltopk_last_error(ctx).decode())

    def theirs():
        return index.search(q, a.k)

    def median_ms(fn):
        fn()
        ts = []
        for _ in range(a.reps):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        return statistics.median(ts) * 1e3

    t_ours = median_ms(ours)
    t_faiss = median_ms(theirs)
    _, fi = theirs()
    agree = np.mean([len(set(oi[r]) & set(fi[r])) / a.k for r in range(a.nq)])
    print("knn %s nq=%d np=%d d=%d k=%d threads=%d device=%s" % (
        a.metric, a.nq, a.np, a.d, a.k, threads, a.device))
    print("cltopk_knn      %10.1f ms" % t_ours)
    print("faiss %-9s %10.1f ms   (faiss %s)" % (
        "FlatL2" if metric == 0 else "FlatIP", t_faiss, faiss.__version__))
    print("ratio           %10.2fx  (cltopk / faiss); index sets agree %.4f" % (
        t_ours / t_faiss, agree))
    lib.cltopk_close(ctx)


if __name__ == "__main__":
    main()
