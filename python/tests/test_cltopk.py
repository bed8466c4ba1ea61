"""Tests of the cltopk package against numpy's stable sort (an independent reference).

Environment: CLTOPK_TEST_DEVICE=cpu skips the OpenCL device (as the C tests do);
another value names the OpenCL device to test (default: the first one listed).
CLTOPK_TEST_PYOPENCL=1 makes a missing pyopencl a failure of the pyopencl round
trip instead of a skip (make check-python sets it where it installed pyopencl).
"""
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import cltopk

TYPES = [np.float32, np.float64, np.int32, np.uint32, np.int64, np.uint64]


def opencl_device():
    want = os.environ.get("CLTOPK_TEST_DEVICE")
    if want == "cpu":
        return None
    if want:
        return want
    devs = cltopk.devices()
    return devs[0]["spec"] if devs else None


CL_DEVICE = opencl_device()
needs_opencl = pytest.mark.skipif(CL_DEVICE is None, reason="no OpenCL device (or "
                                  "CLTOPK_TEST_DEVICE=cpu)")


def make_data(dtype, n, seed):
    """n values of dtype with many ties; floats get NaNs of two payloads, +-inf, +-0."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = rng.integers(-50, 50, n).astype(dt) / 4
        special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0], dt)
        at = rng.integers(0, n, n // 20)
        x[at] = special[rng.integers(0, special.size, at.size)]
        # a NaN with another payload: the bits must come back as they went in
        bits = x.view(np.uint32 if dt.itemsize == 4 else np.uint64)
        bits[rng.integers(0, n, 3)] = 0x7FA00001 if dt.itemsize == 4 else 0xFFF4000000000001
        return x
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    x[rng.integers(0, n, n // 4)] = x[rng.integers(0, n, n // 4)]          # ties
    x[:4] = [info.min, info.max, info.min, info.max]
    return x


def reference_order(x, largest):
    """The positions of x in THE ORDER, by numpy's stable sort (NaN last, -0 == +0,
    NaNs equal among themselves: numpy's own rules)."""
    if not largest:
        return np.argsort(x, kind="stable")
    n = x.size
    return (n - 1 - np.argsort(x[::-1], kind="stable"))[::-1]


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def assert_topk(x, k, largest, values, indices):
    order = reference_order(x, largest)[:k]
    assert indices.dtype == np.int64 and values.dtype == x.dtype.newbyteorder("=")
    assert indices.shape == (k,) and values.shape == (k,)
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(bits(values), bits(x[order].astype(values.dtype)))


def test_reference_is_stable_and_descending():
    # the reference itself, on a case small enough to write out
    x = np.array([2, 5, 2, 7, 5], np.int32)
    assert reference_order(x, True).tolist() == [3, 1, 4, 0, 2]
    assert reference_order(x, False).tolist() == [0, 2, 1, 4, 3]
    f = np.array([0.0, np.nan, -0.0, np.inf, np.nan], np.float32)
    assert reference_order(f, True).tolist() == [1, 4, 3, 0, 2]


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("largest", [True, False], ids=["largest", "smallest"])
@pytest.mark.parametrize("algo", ["auto", "cpu-heap", "cpu-radix", "cpu-bitonic"])
def test_topk_cpu(dtype, largest, algo):
    x = make_data(dtype, 10007, 1)
    for k in (0, 1, 17, 300, 4000 if algo == "cpu-bitonic" else x.size):
        values, indices = cltopk.topk(x, k, largest=largest, device="cpu", algo=algo)
        assert_topk(x, k, largest, values, indices)


@needs_opencl
@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("largest", [True, False], ids=["largest", "smallest"])
def test_topk_opencl(dtype, largest):
    x = make_data(dtype, 50000, 2)
    for algo in ("auto", "sample-filter"):
        for k in (1, 64):
            values, indices = cltopk.topk(x, k, largest=largest, device=CL_DEVICE, algo=algo)
            assert_topk(x, k, largest, values, indices)


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("largest", [True, False], ids=["largest", "smallest"])
def test_select(dtype, largest):
    x = make_data(dtype, 5003, 3)
    order = reference_order(x, largest)
    for rank in (0, 1, 2500, x.size - 1):
        value, index = cltopk.select(x, rank, largest=largest, device="cpu")
        assert isinstance(index, int) and index == order[rank]
        assert bits(np.array([value]))[0] == bits(x[order[rank]:order[rank] + 1])[0]


def test_noncontiguous_and_byteswapped_are_copied():
    base = make_data(np.float64, 30000, 4)
    view = base[::3]
    values, indices = cltopk.topk(view, 50, device="cpu")
    assert_topk(np.ascontiguousarray(view), 50, True, values, indices)
    swapped = base.astype(base.dtype.newbyteorder(">"))
    values, indices = cltopk.topk(swapped, 50, largest=False, device="cpu")
    assert values.dtype == np.float64 and values.dtype.isnative
    assert_topk(base, 50, False, values, indices)
    # a list of Python ints: converted by numpy (int64)
    values, indices = cltopk.topk([3, 1, 4, 1, 5], 2, device="cpu")
    assert values.tolist() == [5, 4] and indices.tolist() == [4, 2]


def test_topk_out():
    """out=: numpy outputs written in place and returned; wrong ones refused, untouched."""
    x = make_data(np.int32, 5000, 16)
    ov, oi = np.full(40, -7, np.int32), np.full(40, -7, np.int64)
    values, indices = cltopk.topk(x, 40, largest=False, device="cpu", out=(ov, oi))
    assert values is ov and indices is oi
    assert_topk(x, 40, False, ov, oi)
    bad = [((np.empty(40, np.int64), oi), TypeError),          # dtype
           ((ov, np.empty(40, np.int32)), TypeError),          # indices' dtype
           ((np.empty(39, np.int32), oi), ValueError),         # size
           ((np.empty(80, np.int32)[::2], oi), ValueError),    # not contiguous
           ((ov,), TypeError), (ov, TypeError)]                # not a pair
    for out, err in bad:
        keep = (ov.copy(), oi.copy())
        with pytest.raises(err):
            cltopk.topk(x, 40, device="cpu", out=out)
        np.testing.assert_array_equal(ov, keep[0])
        np.testing.assert_array_equal(oi, keep[1])
    ro = np.empty(40, np.int32)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        cltopk.topk(x, 40, device="cpu", out=(ro, oi))


def test_bad_arguments():
    x = np.arange(10, dtype=np.float32)
    with pytest.raises(ValueError, match="out of range"):
        cltopk.topk(x, 11, device="cpu")
    with pytest.raises(ValueError, match="out of range"):
        cltopk.topk(x, -1, device="cpu")
    with pytest.raises(TypeError, match="integer"):
        cltopk.topk(x, 2.0, device="cpu")
    with pytest.raises(TypeError, match="float16"):
        cltopk.topk(x.astype(np.float16), 2, device="cpu")
    with pytest.raises(TypeError):
        cltopk.topk(x.astype(np.int8), 2, device="cpu")
    with pytest.raises(ValueError, match="2-dimensional|1-dimensional"):
        cltopk.topk(x.reshape(2, 5), 2, device="cpu")
    with pytest.raises(ValueError, match="unknown algorithm"):
        cltopk.topk(x, 2, device="cpu", algo="quicksort")
    with pytest.raises(ValueError, match="out of range"):
        cltopk.select(x, 10, device="cpu")
    with pytest.raises(TypeError):
        cltopk.topk(x, 2, device=3)


def test_library_errors():
    x = np.arange(1000, dtype=np.float32)
    with pytest.raises(cltopk.Error) as e:
        cltopk.Context("no such device anywhere")
    assert e.value.status == -8 and e.value.name == "CLTOPK_ERR_NO_DEVICE"
    assert "no such device anywhere" in e.value.detail
    with pytest.raises(cltopk.Error) as e:
        cltopk.topk(x, 5, device="cpu", algo="bitonic")
    assert e.value.status == -7 and e.value.name == "CLTOPK_ERR_UNSUPPORTED"
    assert "OpenCL" in e.value.detail
    # the context stays usable after a failing call
    values, _ = cltopk.topk(x, 2, device="cpu")
    assert values.tolist() == [999, 998]


def test_context_with_block():
    x = make_data(np.int64, 4000, 5)
    with cltopk.Context("cpu") as ctx:
        assert ctx.device_name == "cpu"
        values, indices = ctx.topk(x, 10)
        assert_topk(x, 10, True, values, indices)
        values, indices = cltopk.topk(x, 10, largest=False, device=ctx)
        assert_topk(x, 10, False, values, indices)
    assert ctx.closed
    with pytest.raises(ValueError, match="closed"):
        ctx.topk(x, 10)
    ctx.close()   # idempotent


def test_topk_rows_strided_and_segments():
    m = make_data(np.float32, 64 * 300, 6).reshape(64, 300)
    sub = m[:, :250]          # rows 300 apart: used in place with ld = 300
    for largest in (True, False):
        values, indices = cltopk.topk_rows(sub, 7, largest=largest, device="cpu")
        assert values.shape == (64, 7)
        for r in range(64):
            assert_topk(np.ascontiguousarray(sub[r]), 7, largest, values[r], indices[r])
    x = make_data(np.uint64, 1000, 7)
    offsets = np.array([0, 10, 10, 400, 1000])
    values, indices = cltopk.topk_segments(x, offsets, 20, device="cpu")
    for s in range(4):
        seg = x[offsets[s]:offsets[s + 1]]
        k = min(20, seg.size)
        assert_topk(seg, k, True, values[s, :k], indices[s, :k])
        assert (indices[s, k:] == -1).all() and (values[s, k:] == 0).all()


def test_knn_exact():
    rng = np.random.default_rng(8)
    # small integers: every distance is exact in float32, so numpy is an exact reference
    q = rng.integers(-4, 5, (9, 5)).astype(np.float32)
    p = rng.integers(-4, 5, (700, 5)).astype(np.float32)
    dist, idx = cltopk.knn(q, p, 12, device="cpu")
    ref = ((q[:, None, :].astype(np.float64) - p[None, :, :]) ** 2).sum(-1)
    for i in range(q.shape[0]):
        order = np.argsort(ref[i], kind="stable")[:12]
        np.testing.assert_array_equal(idx[i], order)
        np.testing.assert_array_equal(dist[i], ref[i][order].astype(np.float32))
    dist, idx = cltopk.knn(q, p, 3, metric="ip", device="cpu")
    ip = q.astype(np.float64) @ p.T.astype(np.float64)
    np.testing.assert_array_equal(idx[0], reference_order(ip[0], True)[:3])
    with pytest.raises(TypeError, match="float32"):
        cltopk.knn(q.astype(np.float64), p, 3, device="cpu")


def test_query_topk():
    rng = np.random.default_rng(9)
    a = rng.integers(-100, 100, 3000).astype(np.int32)
    b = rng.integers(0, 50, 3000).astype(np.int64)
    scores, index = cltopk.query_topk({"a": a, "b": b}, "a * 2 + b", 15, where="b > 10",
                                      device="cpu")
    score = (a.astype(np.float64) * 2 + b)
    keep = np.flatnonzero(b > 10)
    order = keep[reference_order(score[keep], True)[:15]]
    np.testing.assert_array_equal(index, order)
    np.testing.assert_array_equal(scores, score[order])
    with pytest.raises(cltopk.Error) as e:
        cltopk.query_topk({"a": a}, "a + nosuch", 3, device="cpu")
    assert e.value.name == "CLTOPK_ERR_EXPRESSION" and "nosuch" in e.value.detail


@pytest.mark.parametrize("codec", ["for", "dfor", "rfor"])
def test_pack_unpack_topk_packed(codec):
    rng = np.random.default_rng(10)
    v = np.repeat(rng.integers(-1000, 1000, 2500), 3).astype(np.int32)
    data, starts = cltopk.pack(v, codec)
    assert data.dtype == np.uint32 and starts.dtype == np.uint32
    np.testing.assert_array_equal(cltopk.unpack(data, starts, codec), v)
    values, indices = cltopk.topk_packed(data, starts, 40, codec=codec, largest=False,
                                         device="cpu")
    assert_topk(v, 40, False, values, indices)
    broken = data.copy()
    broken[0] ^= 0xFFFF
    with pytest.raises(cltopk.Error) as e:
        cltopk.unpack(broken, starts, codec)
    assert e.value.name == "CLTOPK_ERR_CORRUPT" and e.value.detail


def test_index(tmp_path):
    rng = np.random.default_rng(11)
    attrs = (rng.integers(0, 64, (3, 20000)) / 4).astype(np.float32)
    with cltopk.Context("cpu") as ctx:
        idx = cltopk.Index.build(attrs, context=ctx, seed=3)
        assert idx.info["n"] == 20000 and idx.info["d"] == 3
        # weights 1 and 0.5 on quarter integers: every score is exact in float32
        scores, tuples, stats = idx.topk([0, 2], [1.0, 0.5], 25)
        ref = attrs[0].astype(np.float64) + 0.5 * attrs[2]
        order = reference_order(ref, True)[:25]
        np.testing.assert_array_equal(tuples, order)
        np.testing.assert_array_equal(scores, ref[order].astype(np.float32))
        assert stats["tuples"] == 20000
        full = idx.full_topk([0, 2], [1.0, 0.5], 25)
        np.testing.assert_array_equal(full[1], order)
        assert full[2]["full_evaluation"] == 1
        idx.save(tmp_path / "i.idx")
        with cltopk.Index.load(tmp_path / "i.idx", context=ctx) as again:
            np.testing.assert_array_equal(again.topk([0, 2], [1.0, 0.5], 25)[1], order)
        with pytest.raises(cltopk.Error) as e:
            idx.topk([0], [-1.0], 5)
        assert e.value.name == "CLTOPK_ERR_INVALID_ARGUMENT"
    with pytest.raises(ValueError, match="closed"):   # closed with its context
        idx.topk([0], [1.0], 5)


def test_explain_and_devices():
    text = cltopk.explain(1 << 20, 64, np.float32, device="cpu")
    assert "\n-> " in text and "n = 1048576" in text
    for d in cltopk.devices():
        assert ":" in d["spec"] and d["device_name"]


def test_threads_distinct_contexts():
    """Eight threads, each on its own context, check their own answers."""
    failures = []

    def work(seed):
        try:
            x = make_data(TYPES[seed % 6], 20000 + seed, seed)
            with cltopk.Context("cpu") as ctx:
                for k in (1, 100):
                    values, indices = ctx.topk(x, k, largest=bool(seed % 2))
                    assert_topk(x, k, bool(seed % 2), values, indices)
        except BaseException as e:   # reported by the main thread
            failures.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


def test_gil_released_during_calls():
    """While the main thread is inside the library, another Python thread runs.

    With a switch interval of 10 s the main thread would keep the GIL for the
    whole call if the binding held it there; a helper thread that only counts
    and sleeps then could not count during the calls."""
    x = make_data(np.float32, 1 << 22, 12)
    cltopk.set_threads(1)
    count, stop = [0], threading.Event()

    def helper():
        while not stop.is_set():
            count[0] += 1
            time.sleep(0.0005)

    old = sys.getswitchinterval()
    t = threading.Thread(target=helper)
    try:
        t.start()
        time.sleep(0.05)
        sys.setswitchinterval(10.0)
        during, elapsed = 0, 0.0
        with cltopk.Context("cpu") as ctx:
            for _ in range(2000):
                if elapsed > 0.3:
                    break
                before, t0 = count[0], time.perf_counter()
                ctx.topk(x, 4096, algo="cpu-heap")
                elapsed += time.perf_counter() - t0
                during += count[0] - before
    finally:
        sys.setswitchinterval(old)
        stop.set()
        t.join()
        cltopk.set_threads(0)
    assert during >= 5, "the helper counted %d times in %.3f s of calls" % (during, elapsed)


def test_command_line(tmp_path):
    x = make_data(np.int64, 3000, 13)
    path = tmp_path / "data.i64"
    x.astype("<i8").tofile(path)
    out = subprocess.run([sys.executable, "-m", "cltopk", "topk", "-k", "4", "-t", "i64",
                          "--device", "cpu", str(path)], capture_output=True, text=True,
                         check=True).stdout
    order = reference_order(x, True)[:4]
    rows = [line.split() for line in out.splitlines()[-4:]]
    assert [int(r[1]) for r in rows] == order.tolist()
    assert [int(r[2]) for r in rows] == x[order].tolist()
    bad = subprocess.run([sys.executable, "-m", "cltopk", "topk", "-k", "4000", "-t", "i64",
                          "--device", "cpu", str(path)], capture_output=True, text=True)
    assert bad.returncode == 1 and "out of range" in bad.stderr


def pyopencl_context(cl):
    """A pyopencl Context and queue on the device the other OpenCL tests use (the one
    cltopk opens for CL_DEVICE), found by its platform and device names: pyopencl's
    wheel brings its own ICD loader, whose order of platforms may differ."""
    with cltopk.Context(CL_DEVICE) as probe:
        want = probe.device_name
    seen = [("%s / %s" % (p.name.strip(), d.name.strip()), d)
            for p in cl.get_platforms() for d in p.get_devices()]
    found = [d for name, d in seen if name == want]
    assert found, ("pyopencl does not see %s (it sees %s): its ICD loader reads "
                   "OCL_ICD_VENDORS, else /etc/OpenCL/vendors"
                   % (want, [name for name, _ in seen]))
    clctx = cl.Context([found[0]])
    return clctx, cl.CommandQueue(clctx)


POISON = 0xA5   # every byte of an output before the call: no answer has that pattern


@needs_opencl
def test_pyopencl_round_trip(monkeypatch):
    """pyopencl arrays in and out on the application's context and queue (cltopk_open_cl
    and the _buffer calls, no copy through the host), checked exactly against numpy's
    stable sort, into outputs poisoned beforehand."""
    if os.environ.get("CLTOPK_TEST_PYOPENCL") == "1":
        import pyopencl as cl   # the build installed it: a missing one fails here
        import pyopencl.array as cla
    else:
        cl = pytest.importorskip("pyopencl")
        cla = pytest.importorskip("pyopencl.array")
    clctx, queue = pyopencl_context(cl)

    # the outputs the wrapper allocates, poisoned, and kept to check that the
    # arrays returned are those the library wrote (no copy)
    made = []
    empty = cla.empty

    def poisoned_empty(q, shape, dtype, *args, **kwargs):
        a = empty(q, shape, dtype, *args, **kwargs)
        a.fill(np.frombuffer(bytes([POISON]) * np.dtype(dtype).itemsize, dtype)[0])
        made.append(a)
        return a
    monkeypatch.setattr(cla, "empty", poisoned_empty)

    with cltopk.Context.from_pyopencl(clctx, queue) as ctx:
        for dtype in (np.float32, np.float64, np.int32, np.uint64):
            x = make_data(dtype, 100003, 14)
            # a non-blocking write: the call must wait for the array's events
            dx = cla.empty(queue, x.size, x.dtype)
            dx.set(x, async_=True)
            for largest in (True, False):
                for k in (1, 33, 1000):
                    del made[:]
                    values, indices = ctx.topk(dx, k, largest=largest)
                    assert isinstance(values, cla.Array) and isinstance(indices, cla.Array)
                    assert values is made[0] and indices is made[1]
                    assert values.context == clctx and indices.context == clctx
                    assert_topk(x, k, largest, values.get(), indices.get())
                order = reference_order(x, largest)
                for rank in (0, 500, x.size - 1):
                    del made[:]
                    value, index = ctx.select(dx, rank, largest=largest)
                    assert value is made[0] and index is made[1]
                    assert value.shape == (1,) and index.shape == (1,)
                    assert index.get()[0] == order[rank]
                    assert bits(value.get())[0] == bits(x[order[rank:rank + 1]])[0]
            np.testing.assert_array_equal(bits(dx.get()), bits(x))   # the input is untouched
        # an array at an offset into its buffer: indices count from the array's start
        x = make_data(np.float32, 70001, 15)
        dx = cla.to_device(queue, x)[1001:]
        assert dx.offset == 1001 * 4
        values, indices = ctx.topk(dx, 77, largest=False)
        assert_topk(x[1001:], 77, False, values.get(), indices.get())
        # a named device algorithm through the same path
        values, indices = ctx.topk(dx, 77, largest=True, algo="sample-filter")
        assert_topk(x[1001:], 77, True, values.get(), indices.get())
        # out=: the caller's arrays, poisoned, written and returned (no array made)
        ov, oi = empty(queue, 77, np.float32), empty(queue, 77, np.int64)
        ov.fill(np.float32(np.frombuffer(bytes([POISON]) * 4, np.float32)[0]))
        oi.fill(np.int64(np.frombuffer(bytes([POISON]) * 8, np.int64)[0]))
        del made[:]
        values, indices = ctx.topk(dx, 77, largest=True, out=(ov, oi))
        assert values is ov and indices is oi and not made
        assert_topk(x[1001:], 77, True, ov.get(), oi.get())
        with pytest.raises(TypeError):   # numpy outputs for a pyopencl input
            ctx.topk(dx, 77, out=(np.empty(77, np.float32), np.empty(77, np.int64)))
        with pytest.raises(ValueError):   # an output at an offset into its buffer
            ctx.topk(dx, 76, out=(empty(queue, 77, np.float32)[1:], oi[1:]))
