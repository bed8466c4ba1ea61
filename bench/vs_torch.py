#!/usr/bin/env python3
"""vs_torch.py - cltopk beside torch.topk on the same array, in the same process.

Loads libcltopk.so with ctypes, generates float32 U(0,1) data with numpy, and
for each k reports: cltopk's median time (cltopk_benchmark: data already on the
device, no transfers; the call to the end of its wait on the host), the read
floor measured in the same call and the same way, and torch.topk's median time
(CUDA events) on the same values already on the GPU (with --rows also its wall
time, taken as cltopk's is).
It also checks cltopk's answer: its values must equal torch's values and
x[index] must equal the returned key, bit for bit.

    python3 bench/vs_torch.py --lib .libs/libcltopk.so --n 536870912 --k 1,32,256,1024

With --rows R the n values are R rows of n / R (row-major): cltopk_benchmark_rows
(cltopk_topk_rows_buffer) beside torch.topk(x.view(R, n / R), k, dim=1), and the
answers of cltopk_topk_rows checked against torch's values row by row.

    python3 bench/vs_torch.py --algo auto --rows 16384 --n 67108864 --k 32

With --knn NQ,NP,D: cltopk_benchmark_knn (cltopk_knn_buffer, squared L2) beside
torch.cdist(q, p) ** 2 followed by torch.topk(largest=False), U(0,1) data; the
index sets are compared (cdist's matrix-product form can swap near ties), and
cltopk's answers for --knn-check sampled queries (8 by default) are checked bit
for bit, distances and indices, against cltopk.h's definition computed here in
numpy (fma32: fmaf exactly, through float64 and TwoSum).

    python3 bench/vs_torch.py --knn 1000,1048576,128 --k 10,100

With --query: the paper's three queries on a tweet-like table of n rows (as
`cltopk bench --query` makes it): cltopk_query_topk beside torch doing the same
(masking + torch.topk) on the same columns already on the GPU; the rows
returned are compared.

    python3 bench/vs_torch.py --query --n 268435456 --k 50
"""
import argparse
import ctypes as C
import statistics
import time
import sys

import numpy as np

ALGOS = {"auto": 0, "bitonic": 1, "sbp-radix": 2, "sbp-tree": 3, "radix-select": 4,
         "sort": 5, "cpu-heap": 6, "cpu-bitonic": 7, "cpu-radix": 8, "sample-filter": 9,
         "bits": 10}


def load(path):
    lib = C.CDLL(path)
    lib.cltopk_open.argtypes = [C.POINTER(C.c_void_p), C.c_char_p]
    lib.cltopk_device_name.restype = C.c_char_p
    lib.cltopk_device_name.argtypes = [C.c_void_p]
    lib.cltopk_last_error.restype = C.c_char_p
    lib.cltopk_last_error.argtypes = [C.c_void_p]
    lib.cltopk_strerror.restype = C.c_char_p
    lib.cltopk_benchmark.argtypes = [C.c_void_p, C.c_int, C.c_void_p, C.c_size_t, C.c_size_t,
                                     C.c_uint, C.c_int, C.c_int, C.POINTER(C.c_double),
                                     C.POINTER(C.c_double)]
    lib.cltopk_topk.argtypes = [C.c_void_p, C.c_int, C.c_void_p, C.c_size_t, C.c_size_t,
                                C.c_uint, C.c_int, C.c_void_p, C.c_void_p]
    lib.cltopk_benchmark_rows.argtypes = [C.c_void_p, C.c_int, C.c_void_p, C.c_size_t,
                                          C.c_size_t, C.c_void_p, C.c_size_t, C.c_uint, C.c_int,
                                          C.c_int, C.POINTER(C.c_double),
                                          C.POINTER(C.c_double)]
    lib.cltopk_topk_rows.argtypes = [C.c_void_p, C.c_int, C.c_void_p, C.c_size_t, C.c_size_t,
                                     C.c_size_t, C.c_size_t, C.c_uint, C.c_int, C.c_void_p,
                                     C.c_void_p]
    lib.cltopk_benchmark_knn.argtypes = [C.c_void_p, C.c_int, C.c_void_p, C.c_size_t,
                                         C.c_void_p, C.c_size_t, C.c_size_t, C.c_size_t,
                                         C.c_int, C.POINTER(C.c_double)]
    lib.cltopk_knn.argtypes = [C.c_void_p, C.c_int, C.c_void_p, C.c_size_t, C.c_void_p,
                               C.c_size_t, C.c_size_t, C.c_size_t, C.c_void_p, C.c_void_p]
    lib.cltopk_query_topk.argtypes = [C.c_void_p, C.c_void_p, C.c_size_t, C.c_size_t,
                                      C.c_char_p, C.c_char_p, C.c_size_t, C.c_uint, C.c_int,
                                      C.c_void_p, C.c_void_p, C.POINTER(C.c_size_t)]
    lib.cltopk_benchmark_query.argtypes = [C.c_void_p, C.c_void_p, C.c_size_t, C.c_size_t,
                                           C.c_char_p, C.c_char_p, C.c_size_t, C.c_uint,
                                           C.c_int, C.c_int, C.POINTER(C.c_double),
                                           C.POINTER(C.c_double)]
    lib.cltopk_close.argtypes = [C.c_void_p]
    return lib


class Column(C.Structure):
    _fields_ = [("name", C.c_char_p), ("type", C.c_int), ("data", C.c_void_p)]


def query_mode(lib, ctx, a, k):
    """--query: cltopk_benchmark_query (the cl_mem form, columns already on the
    device) beside torch masking + topk on columns already on the GPU; the
    read floor of the referenced columns beside"""
    import torch
    n = a.n
    rng = np.random.default_rng(a.seed)
    u = rng.random(n)
    rt = (np.floor(1.0 / (1.0 - 0.9999 * u) ** 1.25) - 1).astype(np.int32)
    lk = (np.floor(1.0 / (1.0 - 0.9999 * rng.random(n)) ** 1.25) - 1).astype(np.int32)
    tm = (1493596800 + rng.integers(0, 31 * 86400, n)).astype(np.int64)
    c = rng.integers(0, 20, n)
    lg = np.where(c < 8, 0, np.where(c < 12, 1, 2 + (c - 12))).astype(np.uint32)
    cols = (Column * 4)((b"retweets", 2, rt.ctypes.data), (b"likes", 2, lk.ctypes.data),
                        (b"time", 4, tm.ctypes.data), (b"lang", 3, lg.ctypes.data))
    pcols = C.cast(cols, C.c_void_p)
    trt, tlk = torch.from_numpy(rt).cuda(), torch.from_numpy(lk).cuda()
    ttm, tlg = torch.from_numpy(tm).cuda(), torch.from_numpy(lg.astype(np.int64)).cuda()
    print("query: %d rows, k = %d" % (n, k))
    print("%-30s %12s %10s %12s %10s  %s" % ("query", "cltopk ms", "x floor", "torch ms",
                                            "speedup", "check"))
    qs = []
    for sel in (0.1, 0.5, 1.0):
        t_ = 1493596800 + int(31 * 86400 * sel)
        qs.append(("Q1 time, selectivity %.1f" % sel, b"retweets", b"time < %d" % t_,
                   lambda t_=t_: torch.where(ttm < t_, trt.float(),
                                             torch.tensor(float("-inf"), device="cuda"))))
    qs.append(("Q2 retweets + 0.5 * likes", b"retweets + 0.5 * likes", None,
               lambda: trt.float() + 0.5 * tlk.float()))
    qs.append(("Q3 lang == 0 or lang == 1", b"retweets", b"lang == 0 or lang == 1",
               lambda: torch.where((tlg == 0) | (tlg == 1), trt.float(),
                                   torch.tensor(float("-inf"), device="cuda"))))
    for name, order, where, score in qs:
        os_ = np.zeros(k, dtype=np.float32)
        oi = np.zeros(k, dtype=np.int64)
        cnt = C.c_size_t()

        tq = C.c_double()
        fl = C.c_double()
        st = lib.cltopk_benchmark_query(ctx, pcols, 4, n, order, where, k, 0, 0, a.reps,
                                        C.byref(tq), C.byref(fl))
        if st != 0:
            sys.exit("cltopk_benchmark_query: %s" % lib.cltopk_last_error(ctx).decode())
        st = lib.cltopk_query_topk(ctx, pcols, 4, n, order, where, k, 0, 0, os_.ctypes.data,
                                   oi.ctypes.data, C.byref(cnt))
        tc = tq.value * 1e3
        tt, tv = timed(lambda: torch.topk(score(), k), a.reps)
        tv = tv[0].cpu().numpy()
        same = np.array_equal(tv[:cnt.value], os_[:cnt.value])
        print("%-30s %12.3f %10.2f %12.3f %9.2fx  %s" % (
            name, tc, tq.value / fl.value if fl.value > 0 else 0, tt, tt / tc,
            "same scores" if same and st == 0 else "DIFFER"))
        sys.stdout.flush()


def fma32(x, y, c):
    """fmaf(x, y, c) elementwise on float32 arrays, exactly: x * y is exact in
    float64 (48 bits), the sum's rounding error comes from TwoSum, and where the
    float64 sum lies exactly halfway between two floats the error decides the
    rounding (the only place rounding twice can differ from rounding once)"""
    pr = x.astype(np.float64) * y.astype(np.float64)
    c64 = c.astype(np.float64)
    s = pr + c64
    bb = s - pr
    err = (pr - (s - bb)) + (c64 - bb)
    r = s.astype(np.float32)
    r64 = r.astype(np.float64)
    toward = np.where(s > r64, np.float32(np.inf), np.float32(-np.inf)).astype(np.float32)
    r2 = np.nextafter(r, toward)
    mid = (r64 + r2.astype(np.float64)) * 0.5
    tie = (r64 != s) & (s == mid) & (err != 0)
    # at a tie, the exact sum lies on err's side of s: the neighbour on that side
    up = err > 0
    pick = np.where((r2.astype(np.float64) > r64) == up, r2, r)
    return np.where(tie, pick, r)


def knn_distances(qv, pt, metric):
    """query qv's distance to every point (pt: the points' coordinates, d x np)
    by cltopk.h's definition: acc = fma(q[j] - p[j], q[j] - p[j], acc) from 0
    in order of j (squared L2; inner product: fma(q[j], p[j], acc))"""
    acc = np.zeros(pt.shape[1], dtype=np.float32)
    for j in range(pt.shape[0]):
        if metric == 0:
            dj = (qv[j] - pt[j]).astype(np.float32)
            acc = fma32(dj, dj, acc)
        else:
            acc = fma32(np.full(pt.shape[1], qv[j], dtype=np.float32), pt[j], acc)
    return acc


def knn_nearest(acc, k, metric):
    """the k nearest of a query's distances acc (knn_distances): the smallest
    squared L2 distances, or the largest inner products, ties by the smaller
    index; returns (distances, indices)"""
    idx = np.arange(acc.shape[0], dtype=np.int64)
    key = acc if metric == 0 else -acc
    order = np.lexsort((idx, key))[:k]
    return acc[order], idx[order]


def knn_exact_sample(q, p, k, metric, dist, index, nsample, seed, cache=None):
    """how many of nsample queries (drawn with seed) have cltopk's answers, their
    distances' bits and indices, equal to those of knn_distances and knn_nearest
    (cache: a dict of the queries' distances, kept for another k)"""
    rng = np.random.default_rng(seed)
    rows = rng.choice(q.shape[0], size=min(nsample, q.shape[0]), replace=False)
    same = 0
    cache = {} if cache is None else cache
    pt = None
    for r in rows:
        if (r, metric) not in cache:
            pt = np.ascontiguousarray(p.T) if pt is None else pt
            cache[(r, metric)] = knn_distances(q[r], pt, metric)
        rd, ri = knn_nearest(cache[(r, metric)], k, metric)
        same += int(np.array_equal(ri, index[r]) and
                    np.array_equal(rd.view(np.uint32), dist[r].view(np.uint32)))
    return same, len(rows)


def knn_mode(lib, ctx, a, ks):
    """--knn: cltopk_knn beside torch.cdist + torch.topk"""
    import torch
    nq, npts, d = [int(v) for v in a.knn.split(",")]
    rng = np.random.default_rng(a.seed)
    q = rng.random((nq, d), dtype=np.float32)
    p = rng.random((npts, d), dtype=np.float32)
    qt, pt = torch.from_numpy(q).cuda(), torch.from_numpy(p).cuda()
    print("knn: nq %d, np %d, d %d, squared L2" % (nq, npts, d))
    cache = {}  # the sampled queries' exact distances, for every k
    print("%6s %12s %12s %10s  %s" % ("k", "cltopk ms", "torch ms", "speedup",
                                       "index sets agree with torch; exact on a sample"))
    for k in ks:
        t = C.c_double()
        st = lib.cltopk_benchmark_knn(ctx, 0, q.ctypes.data, nq, p.ctypes.data, npts, d, k,
                                      a.reps, C.byref(t))
        if st != 0:
            print("%6d failed: %s" % (k, lib.cltopk_last_error(ctx).decode()))
            continue

        def peer():
            return torch.topk(torch.cdist(qt, pt) ** 2, k, dim=1, largest=False)
        tt, ti = timed(peer, a.reps)
        ti = ti[1].cpu().numpy()
        oi = np.zeros((nq, k), dtype=np.int64)
        od = np.zeros((nq, k), dtype=np.float32)
        st = lib.cltopk_knn(ctx, 0, q.ctypes.data, nq, p.ctypes.data, npts, d, k,
                            od.ctypes.data, oi.ctypes.data)
        agree = np.mean([len(set(oi[r]) & set(ti[r])) / k for r in range(nq)]) if st == 0 else 0
        # torch's distances are a matrix product's, rounded otherwise: its index
        # sets may differ at near ties; cltopk's answers are checked exactly against
        # the fma definition on a sample of the queries
        same, asked = knn_exact_sample(q, p, k, 0, od, oi, a.knn_check, a.seed, cache) \
            if st == 0 else (0, 0)
        print("%6d %12.3f %12.3f %9.2fx  %.4f; %d of %d exact" % (
            k, t.value * 1e3, tt, tt / (t.value * 1e3), agree, same, asked))
        sys.stdout.flush()


def timed(fn, reps):
    """median CUDA-event time of fn() in ms after a warm-up, and fn()'s last result;
    timed.wall is the median wall-clock time of the same calls (the call to its
    synchronize, in ms), measured as cltopk's own times are"""
    import torch
    out = fn()
    torch.cuda.synchronize()
    times, walls = [], []
    for _ in range(reps):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        w0 = time.perf_counter()
        e0.record()
        out = fn()
        e1.record()
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - w0) * 1e3)
        times.append(e0.elapsed_time(e1))
    timed.wall = statistics.median(walls)
    return statistics.median(times), out


def rows_mode(lib, ctx, a, x, code, bits, xt, ks):
    """--rows: many rows at once beside torch.topk(dim=1)"""
    rows = a.rows
    cols = a.n // rows
    x = x[:rows * cols]
    xv = xt[:rows * cols].view(rows, cols)
    print("rows: %d x %d" % (rows, cols))
    for k in ks:
        t = C.c_double()
        fl = C.c_double()
        st = lib.cltopk_benchmark_rows(ctx, code, x.ctypes.data, rows, cols, None, k, 0,
                                       ALGOS[a.algo], a.reps, C.byref(t), C.byref(fl))
        if st != 0:
            print("%-8s %6d unsupported or failed: %s" % (a.algo, k,
                                                          lib.cltopk_last_error(ctx).decode()))
            continue
        tt, tv = timed(lambda: torch_topk_rows(xv, k), a.reps)
        tv = tv.cpu().numpy()
        ok_keys = np.zeros(rows * k, dtype=x.dtype)
        ok_idx = np.zeros(rows * k, dtype=np.int64)
        st = lib.cltopk_topk_rows(ctx, code, x.ctypes.data, rows, cols, cols, k, 0,
                                  ALGOS[a.algo], ok_keys.ctypes.data, ok_idx.ctypes.data)
        check = "FAIL(%d)" % st
        if st == 0:
            same = np.array_equal(ok_keys.view(bits), tv.reshape(-1).view(bits))
            at = (np.arange(rows, dtype=np.int64).repeat(k) * cols) + ok_idx
            gather = np.array_equal(x[at].view(bits), ok_keys.view(bits))
            check = "ok" if same and gather else "MISMATCH values=%s gather=%s" % (same, gather)
        # the speedup against torch's CUDA-event time (its device time alone), and
        # against its wall-clock time, which is how cltopk's time is taken (the call
        # to the end of its wait on the host)
        print("%-8s %6d %12.3f %12.3f %8.2f %12.3f %9.2fx  %s  (torch wall %.3f ms: %.2fx)" % (
            a.algo, k, t.value * 1e3, fl.value * 1e3, t.value / fl.value, tt,
            tt / (t.value * 1e3), check, timed.wall, timed.wall / (t.value * 1e3)))
        sys.stdout.flush()


def torch_topk_rows(xv, k):
    import torch
    return torch.topk(xv, k, dim=1)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", default=".libs/libcltopk.so")
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--algo", default="bitonic")
    ap.add_argument("--n", type=int, default=1 << 29)
    ap.add_argument("--k", default="1,32,256,1024")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--dtype", default="f32", choices=["f32", "i32"],
                    help="f32: U(0,1) floats; i32: uniform int32 (the same 32-bit kernels)")
    ap.add_argument("--keys-only", action="store_true",
                    help="time cltopk with keys alone (CLTOPK_BENCH_KEYS_ONLY); float keys "
                         "on the device carry positions anyway, integer keys do not")
    ap.add_argument("--select", action="store_true",
                    help="time the selection of rank k - 1 (cltopk_select_buffer through "
                         "CLTOPK_BENCH_SELECT) beside torch.kthvalue of the same element")
    ap.add_argument("--rows", type=int, default=0,
                    help="R rows of n / R at once (cltopk_benchmark_rows) beside "
                         "torch.topk(dim=1)")
    ap.add_argument("--query", action="store_true",
                    help="the paper's three queries: cltopk_query_topk beside torch")
    ap.add_argument("--knn", default="",
                    help="NQ,NP,D: cltopk_knn beside torch.cdist + torch.topk (the k list)")
    ap.add_argument("--knn-check", type=int, default=8,
                    help="with --knn: the queries whose answers are checked bit for bit "
                         "against the fma definition computed here (default 8)")
    a = ap.parse_args()
    import torch

    lib = load(a.lib)
    ctx = C.c_void_p()
    st = lib.cltopk_open(C.byref(ctx), a.device.encode())
    if st != 0:
        sys.exit("cltopk_open: %s: %s" % (lib.cltopk_strerror(st).decode(),
                                         lib.cltopk_last_error(None).decode()))
    print("device: %s; torch %s on %s" % (lib.cltopk_device_name(ctx).decode(),
                                          torch.__version__, torch.cuda.get_device_name()))
    if a.query:
        query_mode(lib, ctx, a, int(a.k.split(",")[0]))
        lib.cltopk_close(ctx)
        return
    if a.knn:
        knn_mode(lib, ctx, a, [int(v) for v in a.k.split(",")])
        lib.cltopk_close(ctx)
        return
    rng = np.random.default_rng(a.seed)
    if a.dtype == "f32":
        x, code, bits = rng.random(a.n, dtype=np.float32), 0, np.uint32
    else:
        x, code, bits = rng.integers(-2**31, 2**31, a.n, dtype=np.int32), 2, np.uint32
    flags = (0x100 if a.keys_only else 0) | (0x200 if a.select else 0)
    xt = torch.from_numpy(x).cuda()
    print("data: %d x %s, %s" % (a.n, a.dtype, "keys only" if a.keys_only else "keys + index"))
    ks = [int(v) for v in a.k.split(",")]
    print("%-8s %6s %12s %12s %8s %12s %10s  %s" % ("algo", "k", "cltopk ms", "floor ms",
                                                    "x floor", "torch ms", "speedup", "check"))
    if a.rows:
        rows_mode(lib, ctx, a, x, code, bits, xt, ks)
        lib.cltopk_close(ctx)
        return
    for k in ks:
        t = C.c_double()
        fl = C.c_double()
        st = lib.cltopk_benchmark(ctx, code, x.ctypes.data, a.n, k, flags, ALGOS[a.algo],
                                  a.reps, C.byref(t), C.byref(fl))
        if st != 0:
            print("%-8s %6d unsupported or failed: %s" % (a.algo, k,
                                                          lib.cltopk_last_error(ctx).decode()))
            continue
        # torch.topk timing (k = n: torch.sort, stable, descending), CUDA events,
        # median after a warm-up
        def peer():
            if a.select:
                return torch.kthvalue(xt, a.n - k + 1)[0]
            if k == a.n:
                v, _ = torch.sort(xt, descending=True, stable=True)
                return v
            return torch.topk(xt, k)[0]
        tt, tv = timed(peer, a.reps)
        # exactness: our values == torch's values; x[index] == key bit for bit
        if a.select:
            print("%-8s %6d %12.3f %12.3f %8.2f %12.3f %9.2fx  %s" % (
                a.algo, k, t.value * 1e3, fl.value * 1e3, t.value / fl.value, tt,
                tt / (t.value * 1e3), "-"))
            continue
        if k > (1 << 26):  # the host check of a whole sort: values against torch's
            ok_keys = np.zeros(k, dtype=x.dtype)
            st = lib.cltopk_topk(ctx, code, x.ctypes.data, a.n, k, 0, ALGOS[a.algo],
                                 ok_keys.ctypes.data, None)
            same = st == 0 and np.array_equal(ok_keys.view(bits), tv.cpu().numpy().view(bits))
            print("%-8s %6d %12.3f %12.3f %8.2f %12.3f %9.2fx  %s" % (
                a.algo, k, t.value * 1e3, fl.value * 1e3, t.value / fl.value, tt,
                tt / (t.value * 1e3), "ok" if same else "FAIL(%d)" % st))
            continue
        ok_keys = np.zeros(k, dtype=x.dtype)
        ok_idx = np.zeros(k, dtype=np.int64)
        st = lib.cltopk_topk(ctx, code, x.ctypes.data, a.n, k, 0, ALGOS[a.algo],
                             ok_keys.ctypes.data, ok_idx.ctypes.data)
        check = "FAIL(%d)" % st
        if st == 0:
            same = np.array_equal(ok_keys.view(bits), tv.cpu().numpy().view(bits))
            gather = np.array_equal(x[ok_idx].view(bits), ok_keys.view(bits))
            check = "ok" if same and gather else "MISMATCH values=%s gather=%s" % (same, gather)
        print("%-8s %6d %12.3f %12.3f %8.2f %12.3f %9.2fx  %s" % (
            a.algo, k, t.value * 1e3, fl.value * 1e3, t.value / fl.value, tt,
            tt / (t.value * 1e3), check))
        sys.stdout.flush()
    lib.cltopk_close(ctx)


if __name__ == "__main__":
    main()
