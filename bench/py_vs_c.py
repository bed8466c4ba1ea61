#!/usr/bin/env python3
"""py_vs_c.py - cltopk.topk on a pyopencl array against the C call on the same buffer
(issue 16's GPU target: within 1.05x of the C call, 2^29 float32 on the H200).

    python3 bench/py_vs_c.py [--n 2^29] [--k 32,1024] [--reps 21] [--device NAME]

One pyopencl context and in-order queue on the device (--device: part of its
name; default the first GPU, else the first device), one array of n float32
U(0,1) values on it, and one cltopk context on that context and queue
(cltopk.Context.from_pyopencl).  For each k, alternately, wall time from the
call to the end of its work (queue.finish()):

  python  ctx.topk(dx, k): the package's checks, its two output arrays
          (pyopencl.array.empty: a clCreateBuffer each), cltopk_topk_buffer on
          dx's cl_mem, the pyopencl event of the call;
  C       cltopk_topk_buffer through the package's own cffi binding, with the
          same cltopk context, on the same cl_mem, into two buffers made once,
          asking no event (done = NULL).

Prints the medians, their ratio (python / C) and whether the answers agree:
the same k values and indices, bit for bit, the values at those positions of
the host copy, best first, and the k-th value's rank in the host copy (numpy
counts, no sort of 2^29 values).  Exit status 1 on a disagreement.
"""
import argparse
import statistics
import sys
import time

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import cltopk
from cltopk._cltopk import ffi, lib


def pick_device(name):
    devs = [d for p in cl.get_platforms() for d in p.get_devices()]
    if not devs:
        sys.exit("py_vs_c: pyopencl sees no OpenCL device (its ICD loader reads "
                 "OCL_ICD_VENDORS, else /etc/OpenCL/vendors)")
    if name:
        match = [d for d in devs if name.lower() in d.name.lower()
                 or name.lower() in d.platform.name.lower()]
        if not match:
            sys.exit("py_vs_c: no device matches %r: %s" % (name, [d.name for d in devs]))
        return match[0]
    gpus = [d for d in devs if d.type & cl.device_type.GPU]
    return (gpus or devs)[0]


def check(x, k, values, indices):
    """'' when (values, indices) is the top k of x (largest first), else what is wrong."""
    if not np.array_equal(x[indices].view(np.uint32), values.view(np.uint32)):
        return "x[indices] != values"
    if np.any(values[:-1] < values[1:]):
        return "values not descending"
    if len(np.unique(indices)) != k:
        return "repeated indices"
    kth = values[-1]
    above, at = int(np.count_nonzero(x > kth)), int(np.count_nonzero(x == kth))
    if not above < k <= above + at:
        return "the k-th value ranks %d..%d in x" % (above + 1, above + at)
    # ties at the k-th value: the smallest positions, in order
    ties = indices[values == kth]
    if not np.array_equal(ties, np.flatnonzero(x == kth)[:ties.size]):
        return "ties not by smaller index"
    return ""


def count(text):
    """An integer, or 2^E."""
    base, _, exp = text.partition("^")
    return int(base) ** int(exp) if exp else int(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=count, default=1 << 29, help="values (or 2^E)")
    ap.add_argument("--k", default="32,1024")
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--device", default="", help="part of the device's (or platform's) name")
    ap.add_argument("--algo", default="auto")
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()

    dev = pick_device(a.device)
    clctx = cl.Context([dev])
    queue = cl.CommandQueue(clctx)
    x = np.random.default_rng(a.seed).random(a.n, dtype=np.float32)
    dx = cla.to_device(queue, x)
    queue.finish()
    print("device: %s / %s; pyopencl %s, cltopk %s, python %s" % (
        dev.platform.name.strip(), dev.name.strip(), cl.VERSION_TEXT, cltopk.version(),
        sys.version.split()[0]))
    print("data: %d float32 U(0,1) on the device, keys + indices, algo %s, median of %d"
          % (a.n, a.algo, a.reps))
    print("%6s %-14s %12s %12s %12s %8s %8s %10s  %s" % (
        "k", "algo", "python ms", "out= ms", "C ms", "py / C", "out / C", "py - C us", "check"))
    algo = ffi.new("cltopk_algo *")
    if lib.cltopk_algo_parse(a.algo.encode(), algo) != 0:
        sys.exit("py_vs_c: unknown algorithm %r" % a.algo)
    flags = lib.CLTOPK_LARGEST
    bad = 0
    with cltopk.Context.from_pyopencl(clctx, queue) as ctx:
        for k in [int(v) for v in a.k.split(",")]:
            chosen = a.algo
            if a.algo == "auto":   # the planner's choice for device data, as the call makes it
                plan = ctx.explain(a.n, k, np.float32, device_data=True).splitlines()
                chosen = "auto:" + plan[-1].split()[-1] if plan else "auto"
            out_v = cla.empty(queue, k, np.float32)
            out_i = cla.empty(queue, k, np.int64)
            mem = ffi.cast("cl_mem", dx.base_data.int_ptr)
            mv = ffi.cast("cl_mem", out_v.base_data.int_ptr)
            mi = ffi.cast("cl_mem", out_i.base_data.int_ptr)

            def c_call():
                st = lib.cltopk_topk_buffer(ctx._ptr, lib.CLTOPK_FLOAT32, mem, 0, a.n, k, flags,
                                            algo[0], mv, mi, 0, ffi.NULL, ffi.NULL)
                if st != 0:
                    sys.exit("py_vs_c: cltopk_topk_buffer: %s: %s" % (
                        ffi.string(lib.cltopk_strerror(st)).decode(),
                        ffi.string(lib.cltopk_last_error(ctx._ptr)).decode()))
                queue.finish()

            result = []

            def py_call():
                result[:] = ctx.topk(dx, k, largest=True, algo=a.algo)
                queue.finish()

            # the caller's outputs (out=): no arrays made a call
            own = (cla.empty(queue, k, np.float32), cla.empty(queue, k, np.int64))

            def py_out():
                ctx.topk(dx, k, largest=True, algo=a.algo, out=own)
                queue.finish()

            # warm-up (kernel builds, scratch buffers), then alternate the two
            c_call()
            py_call()
            py_out()
            tp, to, tc = [], [], []
            for _ in range(a.reps):
                t0 = time.perf_counter()
                py_call()
                tp.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                py_out()
                to.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                c_call()
                tc.append(time.perf_counter() - t0)
            mp, mo, mc = statistics.median(tp), statistics.median(to), statistics.median(tc)
            pv, pi = result[0].get(), result[1].get()
            cv, ci = out_v.get(), out_i.get()
            what = ""
            ov, oi = own[0].get(), own[1].get()
            if not (np.array_equal(pv.view(np.uint32), cv.view(np.uint32))
                    and np.array_equal(pi, ci) and np.array_equal(ov.view(np.uint32),
                                                                  cv.view(np.uint32))
                    and np.array_equal(oi, ci)):
                what = "python and C differ"
            else:
                what = check(x, k, pv, pi)
            bad += bool(what)
            print("%6d %-14s %12.3f %12.3f %12.3f %8.3f %8.3f %10.1f  %s" % (
                k, chosen, mp * 1e3, mo * 1e3, mc * 1e3, mp / mc, mo / mc, (mp - mc) * 1e6,
                what or "ok"))
            sys.stdout.flush()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
