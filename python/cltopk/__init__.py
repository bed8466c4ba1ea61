"""cltopk: exact top-k and k-th element of numpy and pyopencl arrays.

A binding of the cltopk C library (include/cltopk.h is its manual).  Every
device and algorithm returns the same answer: the first k entries of the
*stable* sort of the input, descending (largest=True) or ascending, where
-0.0 == +0.0, every NaN equals every other NaN and is greater than +inf, and
equal keys come by smaller index first.  A value returned is the input element
at the index returned, bit for bit.

    >>> import numpy as np, cltopk
    >>> values, indices = cltopk.topk(np.array([3, 1, 4, 1, 5], np.int32), 3)
    >>> values.tolist(), indices.tolist()
    ([5, 4, 3], [4, 2, 0])

The functions take `device=` (None: the library's "auto", which honours
$CLTOPK_DEVICE, else the first GPU, else any OpenCL device, else "cpu";
"cpu": OpenMP on the host with no OpenCL; "gpu"; "P:D"; or part of a device
name) and open one context a device string, kept for the process.  A Context
opened explicitly (a `with` block) serves repeated calls on one device.

Arrays: numpy arrays of float32, float64, int32, uint32, int64 or uint64.  A
non-contiguous array (a strided view) or one of non-native byte order is
copied to a contiguous native array first; any other dtype is a TypeError.

Errors of the library raise cltopk.Error (with .status, .name and .detail);
arguments that Python code would reject anyway (a k out of range, a dtype
that cltopk does not have, an unknown algorithm name) raise ValueError or
TypeError before the library is called.

The GIL is released while the library runs (cffi releases it around every C
call), so threads calling cltopk run in parallel on distinct contexts; calls
on one context are serialized.
"""
import atexit
import threading
import weakref

import numpy as np

from ._cltopk import ffi, lib

__all__ = [
    "Error", "Context", "Index", "topk", "select", "topk_rows", "topk_segments", "knn",
    "query_topk", "pack", "unpack", "topk_packed", "devices", "explain", "algorithms",
    "set_threads", "cpu_isa", "version", "DTYPES",
]

__version__ = ffi.string(lib.cltopk_version_string()).decode()

# numpy dtype -> cltopk_dtype
DTYPES = {
    np.dtype(np.float32): lib.CLTOPK_FLOAT32,
    np.dtype(np.float64): lib.CLTOPK_FLOAT64,
    np.dtype(np.int32): lib.CLTOPK_INT32,
    np.dtype(np.uint32): lib.CLTOPK_UINT32,
    np.dtype(np.int64): lib.CLTOPK_INT64,
    np.dtype(np.uint64): lib.CLTOPK_UINT64,
}

STATUS_NAMES = {
    0: "CLTOPK_OK", -1: "CLTOPK_ERR_INVALID_ARGUMENT", -2: "CLTOPK_ERR_BAD_TYPE",
    -3: "CLTOPK_ERR_BAD_ALGO", -4: "CLTOPK_ERR_BAD_FLAGS", -5: "CLTOPK_ERR_K_RANGE",
    -6: "CLTOPK_ERR_RANK_RANGE", -7: "CLTOPK_ERR_UNSUPPORTED", -8: "CLTOPK_ERR_NO_DEVICE",
    -9: "CLTOPK_ERR_NO_OPENCL", -10: "CLTOPK_ERR_OPENCL", -11: "CLTOPK_ERR_BUILD",
    -12: "CLTOPK_ERR_NO_MEMORY", -13: "CLTOPK_ERR_DEVICE_MEMORY",
    -14: "CLTOPK_ERR_BUFFER_SIZE", -15: "CLTOPK_ERR_CORRUPT", -16: "CLTOPK_ERR_INTERNAL",
    -17: "CLTOPK_ERR_EXPRESSION",
}

ALGORITHMS = ("auto", "bitonic", "sbp-radix", "sbp-tree", "radix-select", "sort", "cpu-heap",
              "cpu-bitonic", "cpu-radix", "sample-filter", "bits")
CODECS = ("for", "dfor", "rfor")
METRICS = {"l2": lib.CLTOPK_L2SQ, "l2sq": lib.CLTOPK_L2SQ, "ip": lib.CLTOPK_INNER_PRODUCT,
           "inner_product": lib.CLTOPK_INNER_PRODUCT}


class Error(Exception):
    """A failing call of the cltopk library.

    Attributes: status (the library's negative status code, stable across
    versions), name (e.g. "CLTOPK_ERR_UNSUPPORTED"), message (cltopk_strerror
    of the status) and detail (the library's detail text: what failed and what
    to do; may be empty)."""

    def __init__(self, status, detail="", call=""):
        self.status = int(status)
        self.name = STATUS_NAMES.get(self.status, "CLTOPK_ERR_%d" % -self.status)
        self.message = ffi.string(lib.cltopk_strerror(self.status)).decode()
        self.detail = detail
        self.call = call
        text = "%s%s (%s)" % (call + ": " if call else "", self.message, self.name)
        if detail:
            text += ": " + detail
        super().__init__(text)


def _check(status, cctx, call):
    if status != 0:
        detail = ffi.string(lib.cltopk_last_error(cctx if cctx is not None else ffi.NULL))
        raise Error(status, detail.decode(errors="replace"), call)


def version():
    """The library's version string ("MAJOR.MINOR.PATCH")."""
    return __version__


def algorithms():
    """The algorithm names that the `algo=` arguments take."""
    return ALGORITHMS


def set_threads(n):
    """Use n OpenMP threads in the CPU algorithms (0: OpenMP's default), process-wide."""
    if int(n) < 0:
        raise ValueError("set_threads: n must be >= 0, not %d" % n)
    _check(lib.cltopk_set_threads(int(n)), None, "cltopk_set_threads")


def cpu_isa():
    """The instruction set of the CPU kernels in use: "scalar", "avx2" or "avx512"."""
    return ffi.string(lib.cltopk_cpu_isa()).decode()


# ------------------------------------------------------------------ helpers

def _keys(x, what="x", ndim=1):
    """x as a C-contiguous native-order numpy array of a cltopk type, and its cltopk_dtype."""
    if not isinstance(x, np.ndarray):
        if hasattr(x, "base_data") and hasattr(x, "queue"):
            raise TypeError("%s: a pyopencl array needs a Context from Context.from_pyopencl "
                            "(or Context(device) of the same OpenCL context)" % what)
        x = np.asarray(x)
        if x.dtype not in DTYPES:
            raise TypeError("%s: cltopk takes float32, float64, int32, uint32, int64 or uint64 "
                            "arrays; this converts to %s (pass an array of one of those)"
                            % (what, x.dtype))
    dt = x.dtype.newbyteorder("=") if x.dtype.byteorder not in "=|" else x.dtype
    if dt not in DTYPES:
        raise TypeError("%s: dtype %s is not one of cltopk's types: float32, float64, int32, "
                        "uint32, int64, uint64" % (what, x.dtype))
    if ndim is not None and x.ndim != ndim:
        raise ValueError("%s: expected a %d-dimensional array, got shape %s%s"
                         % (what, ndim, x.shape,
                            " (topk_rows takes the rows of a matrix)" if ndim == 1 else ""))
    if x.dtype != dt or not x.flags.c_contiguous:
        x = np.ascontiguousarray(x, dtype=dt)
    return x, DTYPES[dt]


def _ptr(a, ctype="void *"):
    return ffi.cast(ctype, a.ctypes.data) if a.size else ffi.NULL


def _algo(name):
    if not isinstance(name, str):
        raise TypeError("algo must be a string, one of %s" % ", ".join(ALGORITHMS))
    out = ffi.new("cltopk_algo *")
    if lib.cltopk_algo_parse(name.encode(), out) != 0:
        raise ValueError("unknown algorithm %r: use one of %s" % (name, ", ".join(ALGORITHMS)))
    return out[0]


def _codec(name):
    out = ffi.new("cltopk_codec *")
    if not isinstance(name, str) or lib.cltopk_codec_parse(name.encode(), out) != 0:
        raise ValueError("unknown codec %r: use one of %s" % (name, ", ".join(CODECS)))
    return out[0]


def _count(value, what):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError("%s must be an integer, not %s" % (what, type(value).__name__))
    return int(value)


def _flags(largest):
    return lib.CLTOPK_LARGEST if largest else lib.CLTOPK_SMALLEST


# ----------------------------------------------------------------- contexts

class _Closable:
    """A `with` block closes the object; so does its collection (close() must be
    idempotent)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Context(_Closable):
    """A cltopk context: one device, opened once, for repeated calls.

        with cltopk.Context("cpu") as ctx:
            values, indices = ctx.topk(x, 10)

    device: None or "auto" (the library's choice: $CLTOPK_DEVICE, else the first
    GPU, else any OpenCL device, else "cpu"), "cpu", "gpu", "P:D" as `cltopk
    devices` lists them, or part of a device's name.  Raises cltopk.Error
    (CLTOPK_ERR_NO_DEVICE, ...) when the device cannot be opened.

    The methods are the module's functions without `device=`.  Calls on one
    context from several threads are safe and serialized; use one context a
    thread for parallelism.  close() (or the end of the `with` block) frees it;
    a closed context raises ValueError."""

    def __init__(self, device=None):
        self._lock = threading.Lock()
        self._ptr = ffi.NULL
        self._cl = None   # the pyopencl objects of from_pyopencl
        if device is None:
            dev = ffi.NULL
        elif isinstance(device, str):
            dev = device.encode()
        else:
            raise TypeError("device must be a string or None, not %s" % type(device).__name__)
        self._indexes = weakref.WeakSet()
        p = ffi.new("cltopk_context **")
        _check(lib.cltopk_open(p, dev), None, "cltopk_open(%r)" % (device or "auto"))
        self._ptr = p[0]

    @classmethod
    def from_pyopencl(cls, context, queue, allocator=None):
        """A context on a pyopencl Context and CommandQueue (the library retains them;
        it never calls clFinish on the queue).  Its methods then also take
        pyopencl.array.Array inputs and return pyopencl arrays, with no copy
        through the host.  The arrays it returns come from allocator (a pyopencl
        allocator); by default from a memory pool of the context's own, so that
        repeated calls reuse device buffers instead of creating new ones (some
        60 us a call on an H200).  Needs pyopencl."""
        self = cls.__new__(cls)
        self._lock = threading.Lock()
        self._ptr = ffi.NULL
        if allocator is None:
            import pyopencl.tools as clt
            allocator = clt.MemoryPool(clt.ImmediateAllocator(queue))
        self._cl = (context, queue, allocator)
        self._indexes = weakref.WeakSet()
        p = ffi.new("cltopk_context **")
        _check(lib.cltopk_open_cl(p, ffi.cast("cl_context", context.int_ptr),
                                  ffi.cast("cl_device_id", queue.device.int_ptr),
                                  ffi.cast("cl_command_queue", queue.int_ptr)),
               None, "cltopk_open_cl")
        self._ptr = p[0]
        return self

    def close(self):
        """Free the context (idempotent), and the indexes built or loaded on it."""
        for index in list(self._indexes):
            index.close()
        with self._lock:
            if self._ptr != ffi.NULL:
                lib.cltopk_close(self._ptr)
                self._ptr = ffi.NULL
            if self._cl is not None and hasattr(self._cl[2], "free_held"):
                self._cl[2].free_held()  # the pool's buffers that no array holds

    @property
    def closed(self):
        return self._ptr == ffi.NULL

    @property
    def device_name(self):
        """"cpu" for the CPU device, else "platform / device"."""
        with self._lock:
            return ffi.string(lib.cltopk_device_name(self._live())).decode()

    def __repr__(self):
        if self.closed:
            return "<cltopk.Context closed>"
        return "<cltopk.Context %r>" % self.device_name

    def _live(self):
        if self._ptr == ffi.NULL:
            raise ValueError("this cltopk.Context is closed")
        return self._ptr

    def _call(self, name, *args):
        """Call lib.<name>(ctx, *args) under the context's lock; raise Error on failure."""
        with self._lock:
            ctx = self._live()
            status = getattr(lib, name)(ctx, *args)
            if status != 0:
                _check(status, ctx, name)

    # --------------------------------------------------------- single arrays

    def topk(self, x, k, *, largest=True, algo="auto", sorted=True, out=None):
        """The k largest (largest=False: smallest) entries of x, best first.

        x: a 1-D numpy array of float32, float64, int32, uint32, int64 or uint64
        (a non-contiguous or byte-swapped array is copied first), or on a
        context from Context.from_pyopencl a pyopencl.array.Array (no copy).
        Returns (values, indices): values of x's dtype and int64 indices into x,
        k of each, in THE ORDER (ties by smaller index).  sorted is accepted for
        torch.topk's signature; the results are always sorted.
        algo: "auto" (the planner) or a name of cltopk.algorithms(); a named
        algorithm that cannot run the call raises Error (CLTOPK_ERR_UNSUPPORTED).
        out: None, or (values, indices) to write instead of new arrays: contiguous
        1-D arrays of k elements, of x's dtype and int64, of x's kind (numpy, or
        pyopencl on this context's queue); they are returned.  Repeated calls
        on pyopencl arrays save the arrays' construction that way.
        Raises ValueError for k < 0 or k > len(x), TypeError for other dtypes."""
        if _is_clarray(x):
            return self._topk_cl(x, k, largest, algo, select=False, out=out)
        x, dt = _keys(x)
        k = _count(k, "k")
        if k < 0 or k > x.size:
            raise ValueError("k = %d is out of range: 0 <= k <= len(x) = %d" % (k, x.size))
        a = _algo(algo)
        if out is None:
            values = np.empty(k, x.dtype)
            indices = np.empty(k, np.int64)
        else:
            values, indices = _outputs(out, k, x.dtype, False)
        if k:
            self._call("cltopk_topk", dt, _ptr(x), x.size, k, _flags(largest), a,
                       _ptr(values), _ptr(indices, "int64_t *"))
        return values, indices

    def select(self, x, rank, *, largest=True, algo="auto"):
        """The entry at 0-based position `rank` of THE ORDER (rank 0: the largest,
        or with largest=False the smallest), as (value, index) with value a numpy
        scalar of x's dtype and index an int.  Any 0 <= rank < len(x); no top-k
        is computed.  x as in topk (a pyopencl array gives 1-element pyopencl
        arrays).  Raises ValueError for a rank out of range."""
        if _is_clarray(x):
            return self._topk_cl(x, rank, largest, algo, select=True)
        x, dt = _keys(x)
        rank = _count(rank, "rank")
        if rank < 0 or rank >= x.size:
            raise ValueError("rank = %d is out of range: 0 <= rank < len(x) = %d"
                             % (rank, x.size))
        a = _algo(algo)
        value = np.empty(1, x.dtype)
        index = np.empty(1, np.int64)
        self._call("cltopk_select", dt, _ptr(x), x.size, rank, _flags(largest), a,
                   _ptr(value), _ptr(index, "int64_t *"))
        return value[0], int(index[0])

    def explain(self, n, k, dtype=np.float32, *, largest=True, select=False, device_data=False):
        """What algo="auto" would run for a top-k of n elements of dtype (select=True:
        the selection of rank k - 1), and why: the planner's text with each
        algorithm's predicted time and the choice (the line marked "->").  May
        measure the device's constants on its first use (seconds on a CPU)."""
        dt = DTYPES.get(np.dtype(dtype))
        if dt is None:
            raise TypeError("dtype %s is not one of cltopk's types" % np.dtype(dtype))
        n, k = _count(n, "n"), _count(k, "k")
        if k < 1 or k > n:
            raise ValueError("explain needs 1 <= k <= n (k = %d, n = %d)" % (k, n))
        flags = _flags(largest) | (lib.CLTOPK_PLAN_SELECT if select else 0)
        buf = ffi.new("char[]", 8192)
        self._call("cltopk_explain", dt, n, k, flags, int(bool(device_data)), buf, 8192)
        return ffi.string(buf).decode()

    def benchmark(self, x, k, *, largest=True, algo="auto", reps=11):
        """The library's own timing of a top-k of x (cltopk_benchmark: not a stable
        interface): (median seconds of `reps` calls after a warm-up, seconds of one
        read of x at the device's bandwidth: the floor).  On the "cpu" context the
        calls run on x in place; on an OpenCL device x is copied there once and the
        device work alone is timed."""
        x, dt = _keys(x)
        k = _count(k, "k")
        if k < 1 or k > x.size:
            raise ValueError("k = %d is out of range: 1 <= k <= len(x) = %d" % (k, x.size))
        median, floor = ffi.new("double *"), ffi.new("double *")
        self._call("cltopk_benchmark", dt, _ptr(x), x.size, k, _flags(largest), _algo(algo),
                   _count(reps, "reps"), median, floor)
        return median[0], floor[0]

    # ------------------------------------------------------- many rows at once

    def topk_rows(self, x, k, *, largest=True, algo="auto"):
        """Top-k of every row of a 2-D array: (values, indices) of shape (rows, k),
        indices the columns within each row.  Rows whose elements are contiguous
        are used in place (any row stride); other layouts are copied.
        algo: "auto", "cpu-heap" or "bits"."""
        if not isinstance(x, np.ndarray):
            x = np.asarray(x)
        if x.ndim != 2:
            raise ValueError("topk_rows: expected a 2-D array, got shape %s" % (x.shape,))
        rows, cols = x.shape
        item = x.dtype.itemsize
        if (x.dtype.byteorder in "=|" and x.dtype in DTYPES and x.strides[1] == item
                and x.strides[0] >= cols * item and x.strides[0] % item == 0):
            dt, ld = DTYPES[x.dtype], x.strides[0] // item
        else:
            x, dt = _keys(x, ndim=2)
            ld = cols
        k = _count(k, "k")
        if k < 0 or k > cols:
            raise ValueError("k = %d is out of range: 0 <= k <= columns = %d" % (k, cols))
        a = _algo(algo)
        values = np.empty((rows, k), x.dtype.newbyteorder("="))
        indices = np.empty((rows, k), np.int64)
        if rows and k:
            self._call("cltopk_topk_rows", dt, _ptr(x), rows, cols, ld, k, _flags(largest), a,
                       _ptr(values), _ptr(indices, "int64_t *"))
        return values, indices

    def topk_segments(self, x, offsets, k, *, largest=True, algo="auto"):
        """Top-k of every segment x[offsets[s]:offsets[s+1]] (offsets: nseg + 1
        non-decreasing integers, offsets[-1] <= len(x)): (values, indices) of shape
        (nseg, k), indices within each segment.  A segment shorter than k is
        padded with index -1 and value 0."""
        x, dt = _keys(x)
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        if offsets.ndim != 1 or offsets.size < 1:
            raise ValueError("topk_segments: offsets must be 1-D with nseg + 1 >= 1 entries")
        if offsets[-1] > x.size:
            raise ValueError("topk_segments: offsets[-1] = %d is past the end of x (%d)"
                             % (offsets[-1], x.size))
        k = _count(k, "k")
        if k < 0:
            raise ValueError("k must be >= 0")
        nseg = offsets.size - 1
        a = _algo(algo)
        values = np.empty((nseg, k), x.dtype)
        indices = np.empty((nseg, k), np.int64)
        if nseg and k:
            self._call("cltopk_topk_segments", dt, _ptr(x), nseg,
                       _ptr(offsets, "int64_t *"), k, _flags(largest), a, _ptr(values),
                       _ptr(indices, "int64_t *"))
        return values, indices

    def knn(self, queries, points, k, *, metric="l2"):
        """Exact k nearest neighbours: for each row of queries (nq x d float32) the k
        rows of points (np x d float32) with the smallest squared L2 distance
        (metric="l2") or the largest inner product (metric="ip"), ties by smaller
        point index.  Returns (distances float32, indices int64), each (nq, k).
        Other dtypes are a TypeError (convert with .astype(np.float32))."""
        if metric not in METRICS:
            raise ValueError("metric must be one of %s" % ", ".join(METRICS))
        q, p = np.asarray(queries), np.asarray(points)
        for name, arr in (("queries", q), ("points", p)):
            if arr.dtype != np.float32:
                raise TypeError("knn: %s must be float32, not %s" % (name, arr.dtype))
            if arr.ndim != 2:
                raise ValueError("knn: %s must be 2-D (rows x d), got shape %s"
                                 % (name, arr.shape))
        if q.shape[1] != p.shape[1] or q.shape[1] < 1:
            raise ValueError("knn: queries and points need the same d >= 1 (%d, %d)"
                             % (q.shape[1], p.shape[1]))
        if q.shape[0] < 1:
            raise ValueError("knn: at least one query")
        k = _count(k, "k")
        if k < 0 or k > p.shape[0]:
            raise ValueError("k = %d is out of range: 0 <= k <= points = %d" % (k, p.shape[0]))
        q = np.ascontiguousarray(q)
        p = np.ascontiguousarray(p)
        dist = np.empty((q.shape[0], k), np.float32)
        idx = np.empty((q.shape[0], k), np.int64)
        if k:
            self._call("cltopk_knn", METRICS[metric], _ptr(q, "float *"), q.shape[0],
                       _ptr(p, "float *"), p.shape[0], q.shape[1], k, _ptr(dist, "float *"),
                       _ptr(idx, "int64_t *"))
        return dist, idx

    def query_topk(self, columns, order_by, k, *, where=None, largest=True,
                   score_type=np.float64):
        """The k rows of a table with the best `order_by` among those where `where`
        holds (SQL's SELECT ... WHERE where ORDER BY order_by DESC LIMIT k; the
        expression language is that of cltopk.h).  columns: a dict of name -> 1-D
        array, all of one length.  Returns (scores of score_type, row indices),
        of min(k, rows passing the filter) entries.  A malformed expression raises
        Error with status CLTOPK_ERR_EXPRESSION and the position in .detail."""
        if not isinstance(columns, dict) or not columns:
            raise TypeError("query_topk: columns must be a non-empty dict of name -> array")
        arrays, n = [], None
        for name, col in columns.items():
            if not isinstance(name, str):
                raise TypeError("query_topk: column names must be strings")
            arr, dt = _keys(col, "column %r" % name)
            if n is not None and arr.size != n:
                raise ValueError("query_topk: column %r has %d rows, others %d"
                                 % (name, arr.size, n))
            n = arr.size
            arrays.append((name.encode(), arr, dt))
        st = DTYPES.get(np.dtype(score_type))
        if st not in (lib.CLTOPK_FLOAT32, lib.CLTOPK_FLOAT64):
            raise TypeError("query_topk: score_type must be float32 or float64")
        k = _count(k, "k")
        if k < 0:
            raise ValueError("k must be >= 0")
        cols = ffi.new("cltopk_column[]", len(arrays))
        names = [ffi.new("char[]", name) for name, _, _ in arrays]
        for i, (_, arr, dt) in enumerate(arrays):
            cols[i].name = names[i]
            cols[i].type = dt
            cols[i].data = _ptr(arr)
        scores = np.zeros(k, np.dtype(score_type))
        index = np.full(k, -1, np.int64)
        count = ffi.new("size_t *")
        self._call("cltopk_query_topk", cols, len(arrays), n, _text(order_by, "order_by"),
                   ffi.NULL if where is None else _text(where, "where"), k, _flags(largest),
                   st, _ptr(scores), _ptr(index, "int64_t *"), count)
        return scores[:count[0]], index[:count[0]]

    # -------------------------------------------------------- packed columns

    def unpack(self, data, block_starts, codec="for"):
        """Decode a packed int32 column (from cltopk.pack) to an int32 array.  The
        arrays are untrusted: a malformed column raises Error (CLTOPK_ERR_CORRUPT)
        saying what is wrong and where."""
        c = _codec(codec)
        data, starts = _words(data, "data"), _words(block_starts, "block_starts")
        n = ffi.new("size_t *")
        self._call("cltopk_unpack", c, _ptr(data, "uint32_t *"), data.size,
                   _ptr(starts, "uint32_t *"), starts.size, ffi.NULL, 0, n)
        out = np.empty(n[0], np.int32)
        self._call("cltopk_unpack", c, _ptr(data, "uint32_t *"), data.size,
                   _ptr(starts, "uint32_t *"), starts.size, _ptr(out, "int32_t *"), out.size,
                   ffi.NULL)
        return out

    def topk_packed(self, data, block_starts, k, *, codec="for", largest=True, algo="auto"):
        """Top-k of a packed int32 column without unpacking it on the host (on an
        OpenCL device the column is decoded there): (values int32, indices int64)."""
        c = _codec(codec)
        data, starts = _words(data, "data"), _words(block_starts, "block_starts")
        k = _count(k, "k")
        if k < 0:
            raise ValueError("k must be >= 0")
        a = _algo(algo)
        values = np.empty(k, np.int32)
        indices = np.empty(k, np.int64)
        if k:
            self._call("cltopk_topk_packed", c, _ptr(data, "uint32_t *"), data.size,
                       _ptr(starts, "uint32_t *"), starts.size, k, _flags(largest), a,
                       _ptr(values, "int32_t *"), _ptr(indices, "int64_t *"))
        return values, indices

    # ------------------------------------------------------- pyopencl arrays

    def _topk_cl(self, x, k, largest, algo, select, out=None):
        import pyopencl.array as cla   # only reached with a pyopencl array
        if self._cl is None:
            raise TypeError("a pyopencl array needs a Context from Context.from_pyopencl")
        if x.ndim != 1 or not x.flags.c_contiguous:
            raise ValueError("a pyopencl array must be 1-D and contiguous")
        dt = DTYPES.get(x.dtype)
        if dt is None:
            raise TypeError("dtype %s is not one of cltopk's types" % x.dtype)
        k = _count(k, "rank" if select else "k")
        if select and not 0 <= k < x.size:
            raise ValueError("rank = %d is out of range: 0 <= rank < %d" % (k, x.size))
        if not select and not 0 <= k <= x.size:
            raise ValueError("k = %d is out of range: 0 <= k <= %d" % (k, x.size))
        a = _algo(algo)
        queue = self._cl[1]
        m = 1 if select else k
        if out is None:
            values = cla.empty(queue, m, x.dtype, allocator=self._cl[2])
            indices = cla.empty(queue, m, np.int64, allocator=self._cl[2])
        else:
            values, indices = _outputs(out, m, x.dtype, True)
        if m == 0:
            return values, indices
        if x.offset % x.dtype.itemsize:
            raise ValueError("a pyopencl array's offset must be a multiple of its item size")
        waits = [e for e in x.events]
        if out is not None:  # what is still pending on the outputs, too
            waits += [e for e in values.events] + [e for e in indices.events]
        wait = ffi.new("cl_event[]", [ffi.cast("cl_event", e.int_ptr) for e in waits]) \
            if waits else ffi.NULL
        done = ffi.new("cl_event *")
        name = "cltopk_select_buffer" if select else "cltopk_topk_buffer"
        self._call(name, dt, ffi.cast("cl_mem", x.base_data.int_ptr),
                   x.offset // x.dtype.itemsize, x.size, k, _flags(largest), a,
                   ffi.cast("cl_mem", values.base_data.int_ptr),
                   ffi.cast("cl_mem", indices.base_data.int_ptr), len(waits), wait, done)
        import pyopencl as cl
        event = cl.Event.from_int_ptr(int(ffi.cast("intptr_t", done[0])), retain=False)
        values.add_event(event)
        indices.add_event(event)
        return values, indices


def _outputs(out, k, dtype, cl):
    """The (values, indices) of an out= argument, checked: k elements each,
    contiguous, dtype and int64, numpy arrays (cl False) or pyopencl ones."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError("out must be a pair (values, indices)")
    for a, dt, what in ((out[0], dtype, "values"), (out[1], np.dtype(np.int64), "indices")):
        if cl != _is_clarray(a) or (not cl and not isinstance(a, np.ndarray)):
            raise TypeError("out's %s must be a %s array" % (what, "pyopencl" if cl else "numpy"))
        if a.dtype != dt:
            raise TypeError("out's %s must be of dtype %s, not %s" % (what, dt, a.dtype))
        if a.ndim != 1 or a.size != k or not a.flags.c_contiguous:
            raise ValueError("out's %s must be 1-D, contiguous, of %d elements" % (what, k))
        if cl and a.offset:
            raise ValueError("out's %s must start its buffer (offset 0)" % what)
        if not cl and not a.flags.writeable:
            raise ValueError("out's %s is not writeable" % what)
    return out[0], out[1]


def _is_clarray(x):
    return not isinstance(x, np.ndarray) and hasattr(x, "base_data") and hasattr(x, "queue")


def _text(s, what):
    if not isinstance(s, str):
        raise TypeError("%s must be a string" % what)
    return s.encode()


def _words(a, what):
    a = np.asarray(a)
    if a.dtype != np.uint32 or a.ndim != 1:
        raise TypeError("%s must be a 1-D uint32 array (as cltopk.pack returns)" % what)
    return np.ascontiguousarray(a)


# --------------------------------------------- module functions (a context a device)

_contexts = {}
_contexts_lock = threading.Lock()


def _context(device):
    """The process's context for a device string (opened on first use)."""
    if isinstance(device, Context):
        return device
    with _contexts_lock:
        ctx = _contexts.get(device)
        if ctx is None or ctx.closed:
            ctx = Context(device)
            _contexts[device] = ctx
        return ctx


@atexit.register
def _close_contexts():
    with _contexts_lock:
        for ctx in _contexts.values():
            ctx.close()
        _contexts.clear()


def topk(x, k, *, largest=True, device=None, algo="auto", sorted=True, out=None):
    """The k largest (largest=False: smallest) entries of a 1-D array, best first:
    (values, indices).  See Context.topk (and its out=); device: a device string
    or a Context.  A non-contiguous or byte-swapped array is copied first."""
    return _context(device).topk(x, k, largest=largest, algo=algo, sorted=sorted, out=out)


def select(x, rank, *, largest=True, device=None, algo="auto"):
    """The entry at position `rank` (0-based) of the order topk uses: (value, index).
    See Context.select."""
    return _context(device).select(x, rank, largest=largest, algo=algo)


def topk_rows(x, k, *, largest=True, device=None, algo="auto"):
    """Top-k of every row of a 2-D array.  See Context.topk_rows."""
    return _context(device).topk_rows(x, k, largest=largest, algo=algo)


def topk_segments(x, offsets, k, *, largest=True, device=None, algo="auto"):
    """Top-k of every segment x[offsets[s]:offsets[s+1]].  See Context.topk_segments."""
    return _context(device).topk_segments(x, offsets, k, largest=largest, algo=algo)


def knn(queries, points, k, *, metric="l2", device=None):
    """Exact k nearest neighbours of float32 rows.  See Context.knn."""
    return _context(device).knn(queries, points, k, metric=metric)


def query_topk(columns, order_by, k, *, where=None, largest=True, score_type=np.float64,
               device=None):
    """The k best rows of a table by an expression.  See Context.query_topk."""
    return _context(device).query_topk(columns, order_by, k, where=where, largest=largest,
                                       score_type=score_type)


def unpack(data, block_starts, codec="for", *, device="cpu"):
    """Decode a packed int32 column.  See Context.unpack."""
    return _context(device).unpack(data, block_starts, codec)


def topk_packed(data, block_starts, k, *, codec="for", largest=True, device=None,
                algo="auto"):
    """Top-k of a packed int32 column.  See Context.topk_packed."""
    return _context(device).topk_packed(data, block_starts, k, codec=codec, largest=largest,
                                        algo=algo)


def explain(n, k, dtype=np.float32, *, largest=True, select=False, device=None,
            device_data=False):
    """The planner's choice for a call, with every algorithm's predicted time (a text).
    See Context.explain."""
    return _context(device).explain(n, k, dtype, largest=largest, select=select,
                                    device_data=device_data)


def pack(values, codec="for"):
    """Pack int32 values (a uint32 array is packed as its bits) into a column of the
    codec ("for", "dfor" or "rfor"; docs/FORMAT.md): (data, block_starts), two
    uint32 arrays.  Runs on OpenMP threads; needs no device."""
    c = _codec(codec)
    v = np.asarray(values)
    if v.dtype == np.uint32:
        v = v.view(np.int32)
    if v.dtype != np.int32 or v.ndim != 1:
        raise TypeError("pack: values must be a 1-D int32 (or uint32) array")
    v = np.ascontiguousarray(v)
    cap = lib.cltopk_pack_bound(c, v.size)
    scap = lib.cltopk_pack_starts_bound(c, v.size)
    if cap == 0 or scap == 0:
        raise ValueError("pack: %d values are more than a column holds" % v.size)
    data = np.empty(cap, np.uint32)
    starts = np.empty(scap, np.uint32)
    words, nstarts = ffi.new("size_t *"), ffi.new("size_t *")
    _check(lib.cltopk_pack(c, _ptr(v, "int32_t *"), v.size, _ptr(data, "uint32_t *"), cap,
                           words, _ptr(starts, "uint32_t *"), scap, nstarts),
           None, "cltopk_pack")
    return data[:words[0]].copy(), starts[:nstarts[0]].copy()


def devices():
    """The OpenCL devices, in the "P:D" order that device strings use: a list of dicts
    (spec, platform_name, device_name, device_version, driver_version, is_gpu,
    is_cpu, global_mem_bytes, max_alloc_bytes, local_mem_bytes,
    max_work_group_size, compute_units, has_fp64).  The "cpu" device (OpenMP, no
    OpenCL) is always there besides and is not listed."""
    out = []
    info = ffi.new("cltopk_device_info *")
    for i in range(lib.cltopk_device_count()):
        _check(lib.cltopk_device_get(i, info), None, "cltopk_device_get")
        out.append({
            "spec": "%d:%d" % (info.platform, info.device),
            "platform_name": ffi.string(info.platform_name).decode(errors="replace"),
            "device_name": ffi.string(info.device_name).decode(errors="replace"),
            "device_version": ffi.string(info.device_version).decode(errors="replace"),
            "driver_version": ffi.string(info.driver_version).decode(errors="replace"),
            "is_gpu": bool(info.is_gpu), "is_cpu": bool(info.is_cpu),
            "global_mem_bytes": info.global_mem_bytes, "max_alloc_bytes": info.max_alloc_bytes,
            "local_mem_bytes": info.local_mem_bytes,
            "max_work_group_size": info.max_work_group_size,
            "compute_units": info.compute_units, "has_fp64": bool(info.has_fp64),
        })
    return out


# ------------------------------------------------------- the early-stopping index

class Index(_Closable):
    """The early-stopping top-k index of cltopk.h (cltopk_index_*): the k best
    tuples of a table under a weighted sum of some of its float32 attributes,
    read block by block until the rest cannot enter.

        idx = cltopk.Index.build(attrs, context=ctx)    # attrs: d x n float32
        scores, tuples, stats = idx.topk([0, 2], [1.0, 0.5], 10)

    An index belongs to its context (which it keeps alive); free it with
    close() or a `with` block."""

    def __init__(self, ptr, context, keep=None):
        self._ptr = ptr
        self._context = context
        self._keep = keep
        context._indexes.add(self)

    @classmethod
    def build(cls, attrs, *, partitioning="random", partitions=0, block=0, seed=0,
              context=None):
        """Build an index of n tuples of d attributes: attrs is a d x n float32 array
        (attrs[j][t]: attribute j of tuple t; every value finite).  partitioning
        "random" or "angle"; partitions, block: 0 chooses.  context: a Context or a
        device string (None: the default device)."""
        ctx = _context(context)
        a = np.asarray(attrs)
        if a.dtype != np.float32:
            raise TypeError("Index.build: attrs must be float32, not %s" % a.dtype)
        if a.ndim != 2:
            raise ValueError("Index.build: attrs must be d x n, got shape %s" % (a.shape,))
        a = np.ascontiguousarray(a)
        parts = {"random": lib.CLTOPK_PARTITION_RANDOM, "angle": lib.CLTOPK_PARTITION_ANGLE}
        if partitioning not in parts:
            raise ValueError("partitioning must be 'random' or 'angle'")
        opt = ffi.new("cltopk_index_options *")
        opt.partitioning = parts[partitioning]
        opt.partitions = _count(partitions, "partitions")
        opt.block = _count(block, "block")
        opt.seed = _count(seed, "seed")
        rows = ffi.new("float *[]", [ffi.cast("float *", a[j].ctypes.data)
                                      for j in range(a.shape[0])])
        out = ffi.new("cltopk_index **")
        ctx._call("cltopk_index_build", rows, a.shape[0], a.shape[1], opt, out)
        return cls(out[0], ctx)

    @classmethod
    def load(cls, path, *, context=None):
        """Load an index saved by save() (the file is checked: Error CLTOPK_ERR_CORRUPT)."""
        ctx = _context(context)
        out = ffi.new("cltopk_index **")
        ctx._call("cltopk_index_load", _text(str(path), "path"), out)
        return cls(out[0], ctx)

    def _live(self):
        if self._ptr == ffi.NULL:
            raise ValueError("this cltopk.Index is closed")
        return self._ptr

    def _query(self, name, attr, w, k):
        attr = np.ascontiguousarray(attr, dtype=np.uint32)
        w = np.ascontiguousarray(w, dtype=np.float32)
        if attr.ndim != 1 or attr.shape != w.shape:
            raise ValueError("attr and w must be 1-D of one length")
        k = _count(k, "k")
        if k < 0:
            raise ValueError("k must be >= 0")
        scores = np.empty(k, np.float32)
        index = np.empty(k, np.int64)
        stats = ffi.new("cltopk_index_stats *")
        ctx = self._context
        with ctx._lock:
            cctx = ctx._live()
            status = getattr(lib, name)(self._live(), _ptr(attr, "unsigned *"),
                                        _ptr(w, "float *"), attr.size, k,
                                        _ptr(scores, "float *"), _ptr(index, "int64_t *"),
                                        stats)
            _check(status, cctx, name)
        return scores, index, {f: getattr(stats, f) for f in (
            "tuples_evaluated", "blocks_read", "tuples", "partitions", "partitions_stopped",
            "stopped_early", "full_evaluation", "on_device")}

    def topk(self, attr, w, k):
        """The k tuples with the largest sum of w[j] * attribute attr[j] (w >= 0):
        (scores float32, tuple numbers int64, stats dict)."""
        return self._query("cltopk_index_topk", attr, w, k)

    def full_topk(self, attr, w, k):
        """The same answer by evaluating every tuple (the baseline)."""
        return self._query("cltopk_index_full_topk", attr, w, k)

    @property
    def info(self):
        """The index's shape: a dict of n, d, partitions, block, blocks, seed, on_device,
        bytes."""
        info = ffi.new("cltopk_index_info *")
        _check(lib.cltopk_index_info_get(self._live(), info), None, "cltopk_index_info_get")
        return {f: getattr(info, f) for f in ("n", "d", "partitions", "block", "blocks", "seed",
                                              "on_device", "bytes")}

    def save(self, path):
        """Write the index to a file (docs/FORMAT.md, "Index files")."""
        ctx = self._context
        with ctx._lock:
            cctx = ctx._live()
            _check(lib.cltopk_index_save(self._live(), _text(str(path), "path")), cctx,
                   "cltopk_index_save")

    def close(self):
        """Free the index (idempotent)."""
        if self._ptr != ffi.NULL:
            with self._context._lock:   # the context outlives its indexes (Context.close)
                lib.cltopk_index_free(self._ptr)
                self._ptr = ffi.NULL
