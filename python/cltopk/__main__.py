"""python -m cltopk: a quick check of the package, mirroring the `cltopk` command.

    python -m cltopk topk -k 10 data.f32
    python -m cltopk select -r 99 -t i64 --smallest data.i64
    python -m cltopk devices
"""
import argparse
import json
import math
import sys

import numpy as np

import cltopk

TYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "u32": np.uint32,
         "i64": np.int64, "u64": np.uint64}


def read_input(path, dtype, text):
    """FILE (- : standard input): raw little-endian elements, or with text one number a
    line (blank lines and lines starting with # skipped)."""
    if text is None:
        text = path.endswith((".txt", ".csv"))
    stream = sys.stdin.buffer if path == "-" else open(path, "rb")
    with stream:
        raw = stream.read()
    dt = np.dtype(dtype).newbyteorder("<")
    if not text:
        if len(raw) % dt.itemsize:
            raise ValueError("%s: %d bytes is not a whole number of %d-byte elements"
                             % (path, len(raw), dt.itemsize))
        return np.frombuffer(raw, dt).astype(np.dtype(dtype)), "binary"
    values = []
    for number, line in enumerate(raw.decode().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            values.append(float(line) if dt.kind == "f" else int(line, 0))
        except ValueError:
            raise ValueError("%s:%d: not a number: %r" % (path, number, line)) from None
    try:
        return np.array(values, dtype=dtype), "text"
    except OverflowError as e:
        raise ValueError("%s: a value does not fit %s (%s)" % (path, np.dtype(dtype), e))


def number(v):
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m cltopk",
                                 description="top-k and selection of a file with the cltopk "
                                             "package (as the cltopk command)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("topk", "select"):
        p = sub.add_parser(name, help="the %s of a file" % ("K best" if name == "topk"
                                                             else "entry at RANK"))
        if name == "topk":
            p.add_argument("-k", "--k", type=int, required=True, help="how many")
        else:
            p.add_argument("-r", "--rank", type=int, required=True, help="the rank, from 0")
        p.add_argument("-t", "--type", choices=sorted(TYPES), default="f32",
                       help="element type (default f32)")
        p.add_argument("--smallest", action="store_true", help="ascending order")
        p.add_argument("-a", "--algo", default="auto", help="algorithm (default auto)")
        p.add_argument("--device", default=None, help="device string (default auto)")
        p.add_argument("--json", action="store_true", help="one JSON object")
        fmt = p.add_mutually_exclusive_group()
        fmt.add_argument("--text", dest="text", action="store_true", default=None,
                         help="one number a line (default for .txt and .csv)")
        fmt.add_argument("--binary", dest="text", action="store_false",
                         help="raw little-endian elements (default otherwise)")
        p.add_argument("file", help="FILE, or - for standard input")
    sub.add_parser("devices", help="the OpenCL devices")
    args = ap.parse_args(argv)

    try:
        if args.cmd == "devices":
            for d in cltopk.devices():
                print("%-5s %s / %s" % (d["spec"], d["platform_name"], d["device_name"]))
            print("cpu   (OpenMP on the host, no OpenCL)")
            return 0
        x, fmt = read_input(args.file, TYPES[args.type], args.text)
        ctx = cltopk.Context(args.device)
        largest = not args.smallest
        if args.cmd == "topk":
            values, indices = ctx.topk(x, args.k, largest=largest, algo=args.algo)
            first = 0
        else:
            value, index = ctx.select(x, args.rank, largest=largest, algo=args.algo)
            values, indices, first = np.array([value]), np.array([index]), args.rank
    except (cltopk.Error, ValueError, TypeError, OSError) as e:
        print("python -m cltopk: %s" % e, file=sys.stderr)
        return 1
    order = "largest" if largest else "smallest"
    if args.json:
        print(json.dumps({
            "device": ctx.device_name, "algorithm": args.algo, "type": args.type,
            "format": fmt, "n": int(x.size),
            ("k" if args.cmd == "topk" else "rank"): args.k if args.cmd == "topk" else args.rank,
            "order": order,
            "results": [{"rank": first + i, "index": int(j), "value": number(v.item())}
                        for i, (j, v) in enumerate(zip(indices, values))]}))
        return 0
    print("device     %s" % ctx.device_name)
    print("algorithm  %s" % args.algo)
    what = ("the %d %s" % (args.k, order) if args.cmd == "topk"
            else "rank %d of the %s first" % (args.rank, order))
    print("input      %d x %s (%s), %s" % (x.size, args.type, fmt, what))
    print()
    print("  rank        index  value")
    for i, (j, v) in enumerate(zip(indices, values)):
        print("%6d %12d  %s" % (first + i, j, v.item()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
