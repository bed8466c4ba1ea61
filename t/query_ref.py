#!/usr/bin/env python3
"""query_ref.py - TAP test of `cltopk query` against a numpy evaluation of the
typing rules of cltopk.h (run by t/query_numpy.sh, which skips it where
python3 or numpy is missing).

A table of every column type (with NaN, infinities, -0 and the integer
extremes) is written to files; random expression trees (a bounded generator,
seeded: a few from a fixed seed, then more from the run's; both printed) are
rendered to text for `cltopk query --json` and evaluated here with numpy: a
comparison of two integer terms on Python's exact integers, everything else in
float32 or float64 arrays, one rounding an operation; min and max NaN if
either is, else the first unless the second is strictly smaller (larger).  The
rows that pass are ordered by (score in THE ORDER, row) and the first k
compared with the command's rows and scores.  log and exp are cltopk's own
(t/query.t checks them) and are left out.

    CLTOPK=tools/cltopk python3 t/query_ref.py [SEED] [QUERIES] [FIXED_SEED FIXED_QUERIES]

With FIXED_SEED, FIXED_QUERIES queries from that seed (the same every run)
come first, then QUERIES from SEED.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np

CLTOPK = os.environ.get("CLTOPK", "./tools/cltopk")
DEVICE = os.environ.get("CLTOPK_QUERY_DEVICE", "cpu")
N = 1500
TYPES = [("f", "f32", np.float32), ("d", "f64", np.float64), ("i", "i32", np.int32),
         ("u", "u32", np.uint32), ("l", "i64", np.int64), ("ul", "u64", np.uint64),
         ("j", "i32", np.int32)]
INT_TYPES = {"i32", "u32", "i64", "u64"}
# decimal literals whose float32 value is the same whether rounded once from
# the text (cltopk) or through a double (numpy): checked below
FLOAT_LITS = ["0.5", "1.5", "2e3", ".25", "0.1", "3.4e38", "1e-3", "0.0", "7.", "1E+2"]


def make_table(rng):
    cols = {}
    for name, tname, dt in TYPES:
        if tname in ("f32", "f64"):
            v = np.array([rng.randint(-1000, 1000) / 8.0 for _ in range(N)], dtype=dt)
            sp = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40 if tname == "f32" else 1e-310,
                  3.0e38, -1.0]
        elif tname == "i32":
            v = np.array([rng.randint(-100, 100) for _ in range(N)], dtype=dt)
            sp = [-2**31, 2**31 - 1, 0, -1, 1, 16777217, -16777217, 7]
        elif tname == "u32":
            v = np.array([rng.randint(0, 200) for _ in range(N)], dtype=dt)
            sp = [0, 2**32 - 1, 1, 16777217, 2**31, 5, 6, 7]
        elif tname == "i64":
            v = np.array([rng.randint(-100, 100) for _ in range(N)], dtype=dt)
            sp = [-2**63, 2**63 - 1, 0, -1, 2**53 + 1, -(2**53 + 1), 2**32, 3]
        else:
            v = np.array([rng.randint(0, 200) for _ in range(N)], dtype=dt)
            sp = [0, 2**64 - 1, 1, 2**53 + 1, 2**63, 2**64 - 2, 2, 3]
        for i in range(N):
            if rng.randrange(8) == 0:
                v[i] = np.array(sp[rng.randrange(8)]).astype(dt)
        cols[name] = (tname, v)
    return cols


# ---- expression trees: tuples (kind, ...)

def gen_int_term(rng, cols):
    if rng.randrange(2):
        return ("col", rng.choice([n for n, (t, _) in cols.items() if t in INT_TYPES]))
    mag = rng.choice([0, 1, 7, 100, 16777217, 2**53 + 1, 2**63, 2**64 - 1])
    neg = mag != 0 and mag <= 2**63 and rng.randrange(2) == 1
    return ("liti", -mag if neg else mag, rng.randrange(2))


def gen_cond(rng, cols, depth):
    r = 0 if depth <= 0 else rng.randrange(6)
    if r <= 2:
        op = rng.choice(["<", "<=", ">", ">=", "==", "!="])
        if rng.randrange(2):
            return ("cmp", op, gen_int_term(rng, cols), gen_int_term(rng, cols))
        return ("cmp", op, gen_num(rng, cols, depth - 1), gen_num(rng, cols, depth - 1))
    if r == 3:
        return ("not", gen_cond(rng, cols, depth - 1))
    return ("and" if r == 4 else "or", gen_cond(rng, cols, depth - 1),
            gen_cond(rng, cols, depth - 1))


def gen_num(rng, cols, depth):
    r = rng.randrange(3) if depth <= 0 else rng.randrange(10)
    if r == 0:
        return ("col", rng.choice(list(cols)))
    if r == 1:
        return gen_int_term(rng, cols)
    if r == 2:
        return ("litf", rng.choice(FLOAT_LITS), rng.randrange(4) == 0)
    if r <= 5:
        return ("bin", rng.choice("+-*/"), gen_num(rng, cols, depth - 1),
                gen_num(rng, cols, depth - 1))
    if r == 6:
        return ("neg", gen_num(rng, cols, depth - 1))
    if r == 7:
        return ("fn1", rng.choice(["abs", "sqrt", "floor", "ceil"]), gen_num(rng, cols, depth - 1))
    if r == 8:
        return ("fn2", rng.choice(["min", "max"]), gen_num(rng, cols, depth - 1),
                gen_num(rng, cols, depth - 1))
    return ("if", gen_cond(rng, cols, depth - 1), gen_num(rng, cols, depth - 1),
            gen_num(rng, cols, depth - 1))


def render(x):
    k = x[0]
    if k == "col":
        return x[1]
    if k == "liti":
        v, hexa = x[1], x[2]
        if v < 0:
            return "(-%d)" % -v
        return "0x%X" % v if hexa else "%d" % v
    if k == "litf":
        return "(-%s)" % x[1] if x[2] else x[1]
    if k == "bin":
        return "(%s %s %s)" % (render(x[2]), x[1], render(x[3]))
    if k == "neg":
        return "-(%s)" % render(x[1])
    if k == "fn1":
        return "%s(%s)" % (x[1], render(x[2]))
    if k == "fn2":
        return "%s(%s, %s)" % (x[1], render(x[2]), render(x[3]))
    if k == "if":
        return "if(%s, %s, %s)" % (render(x[1]), render(x[2]), render(x[3]))
    if k == "cmp":
        return "(%s %s %s)" % (render(x[2]), x[1], render(x[3]))
    if k in ("and", "or"):
        return "(%s %s %s)" % (render(x[1]), k, render(x[2]))
    return "not %s" % render(x[1])


# ---- the reference

def is_int_term(x, cols):
    return x[0] == "liti" or (x[0] == "col" and cols[x[1]][0] in INT_TYPES)


def exact(x, cols):
    if x[0] == "liti":
        return [x[1]] * N
    return [int(v) for v in cols[x[1]][1]]


def num(x, cols, ft):
    k = x[0]
    with np.errstate(all="ignore"):
        if k == "col":
            return cols[x[1]][1].astype(ft)
        if k == "liti":
            return np.full(N, ft(float(x[1])) if abs(x[1]) < 2**24 else
                           np.array([x[1]], dtype=np.int64 if x[1] < 2**63 else np.uint64)
                           .astype(ft)[0], dtype=ft)
        if k == "litf":
            v = ft(("-" if x[2] else "") + x[1])
            return np.full(N, v, dtype=ft)
        if k == "bin":
            a, b = num(x[2], cols, ft), num(x[3], cols, ft)
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[x[1]]
        if k == "neg":
            return -num(x[1], cols, ft)
        if k == "fn1":
            a = num(x[2], cols, ft)
            return {"abs": np.abs, "sqrt": np.sqrt, "floor": np.floor, "ceil": np.ceil}[x[1]](a)
        if k == "fn2":
            a, b = num(x[2], cols, ft), num(x[3], cols, ft)
            pick = np.where(b < a, b, a) if x[1] == "min" else np.where(b > a, b, a)
            return np.where(np.isnan(a) | np.isnan(b), ft(np.nan), pick).astype(ft)
        if k == "if":
            return np.where(cond(x[1], cols, ft), num(x[2], cols, ft),
                            num(x[3], cols, ft)).astype(ft)
    raise ValueError(k)


def cond(x, cols, ft):
    k = x[0]
    if k == "cmp":
        op = x[1]
        if is_int_term(x[2], cols) and is_int_term(x[3], cols):
            a, b = exact(x[2], cols), exact(x[3], cols)
            f = {"<": lambda p, q: p < q, "<=": lambda p, q: p <= q, ">": lambda p, q: p > q,
                 ">=": lambda p, q: p >= q, "==": lambda p, q: p == q,
                 "!=": lambda p, q: p != q}[op]
            return np.array([f(p, q) for p, q in zip(a, b)])
        a, b = num(x[2], cols, ft), num(x[3], cols, ft)
        with np.errstate(all="ignore"):
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b,
                    "!=": a != b}[op]
    if k == "and":
        return cond(x[1], cols, ft) & cond(x[2], cols, ft)
    if k == "or":
        return cond(x[1], cols, ft) | cond(x[2], cols, ft)
    return ~cond(x[1], cols, ft)


def order_key(bits, f64, smallest):
    sign = 1 << (63 if f64 else 31)
    ones = (1 << (64 if f64 else 32)) - 1
    inf = 0x7FF0000000000000 if f64 else 0x7F800000
    if bits & ~sign & ones > inf:
        u = ones
    else:
        if bits == sign:
            bits = 0
        u = (~bits & ones) if bits & sign else (bits | sign)
    return (~u & ones) if smallest else u


def expected(order, where, cols, k, f64, smallest):
    ft = np.float64 if f64 else np.float32
    s = num(order, cols, ft)
    passing = cond(where, cols, ft) if where is not None else np.ones(N, dtype=bool)
    ut = np.uint64 if f64 else np.uint32
    bits = s.view(ut)
    rows = []
    for i in range(N):
        if passing[i]:
            b = int(bits[i])
            if np.isnan(s[i]):
                b = 0x7FF8000000000000 if f64 else 0x7FC00000
            rows.append((-order_key(b, f64, smallest), i, b))
    rows.sort()
    return [(i, b) for _, i, b in rows[:k]]


def parsed_bits(v, f64):
    if "nan" in v:
        return "nan"
    v = float(v)
    if f64:
        return int(np.array([v], dtype=np.float64).view(np.uint64)[0])
    return int(np.array([v], dtype=np.float32).view(np.uint32)[0])


def run_batch(rng, count, label, tmp, n_ok):
    """count random queries from rng on a table of its own; (tests, failed)"""
    cols = make_table(rng)
    args = []
    for name, (tname, v) in cols.items():
        path = os.path.join(tmp, "%s-%s.bin" % (label.split()[0], name))
        v.astype(v.dtype.newbyteorder("<")).tofile(path)
        args += ["--col", "%s:%s:%s" % (name, tname, path)]
    failed = 0
    for t in range(count):
        f64 = t % 2 == 1
        smallest = (t // 2) % 2 == 1
        order = gen_num(rng, cols, 1 + rng.randrange(4))
        where = gen_cond(rng, cols, 1 + rng.randrange(3)) if rng.randrange(3) else None
        k = 1 + rng.randrange(80)
        cmd = [CLTOPK, "query", "-k", str(k), "--order", render(order), "--json",
               "--device", DEVICE] + args
        if where is not None:
            cmd += ["--where", render(where)]
        if f64:
            cmd.append("--f64")
        if smallest:
            cmd.append("--smallest")
        want = expected(order, where, cols, k, f64, smallest)
        r = subprocess.run(cmd, capture_output=True, text=True)
        good = r.returncode == 0
        why = ""
        if good:
            # numbers as their text: "-0" must stay a negative zero
            got = json.loads(r.stdout, parse_int=str, parse_float=str)
            res = got["results"]
            good = int(got["count"]) == len(want) and len(res) == len(want)
            for (wi, wb), g in zip(want, res):
                gb = parsed_bits(g["score"], f64)
                wnan = (wb & 0x7FFFFFFFFFFFFFFF if f64 else wb & 0x7FFFFFFF) > \
                    (0x7FF0000000000000 if f64 else 0x7F800000)
                if int(g["row"]) != wi or (gb != "nan" if wnan else gb != wb):
                    good = False
                    why = "row %s score %s, want row %d bits 0x%x" % (g["row"], g["score"],
                                                                     wi, wb)
                    break
            if not why and not good:
                why = "count %s, want %d" % (got["count"], len(want))
        else:
            why = r.stderr.strip()
        n_ok += 1
        print("%s %d - numpy reference (%s): %s scores, %s, k %d" % (
            "ok" if good else "not ok", n_ok, label, "float64" if f64 else "float32",
            "smallest" if smallest else "largest", k))
        if not good:
            failed += 1
            print("# order_by: %s" % render(order))
            print("# where: %s" % (render(where) if where is not None else "(none)"))
            print("# %s" % why)
    return n_ok, failed


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else random.randrange(1 << 30)
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    fixed_seed = int(sys.argv[3]) if len(sys.argv) > 3 else None
    fixed_count = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    # the literals' float32 values agree either way (else the test is wrong)
    for lit in FLOAT_LITS:
        assert np.float32(lit) == np.float32(float(lit)), lit
    n_ok = 0
    failed = 0
    with tempfile.TemporaryDirectory(dir=os.environ.get("CLTOPK_TEST_TMPDIR")) as tmp:
        # the same queries every run first, then the run's own
        if fixed_seed is not None and fixed_count:
            print("# fixed seed %d: %d queries, the same every run" % (fixed_seed, fixed_count))
            n_ok, f = run_batch(random.Random(fixed_seed), fixed_count, "fixed seed", tmp, n_ok)
            failed += f
        print("# seed %d (repeat: python3 t/query_ref.py %d %d)" % (seed, seed, count))
        n_ok, f = run_batch(random.Random(seed), count, "seed %d" % seed, tmp, n_ok)
        failed += f
    print("1..%d" % n_ok)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
