#!/usr/bin/env python3
"""Draw time against k from the benchmark's JSON lines, as SVG.

    tools/cltopk bench --cpu -k 1,8,64,256,1024,4096 --json > cpu.jsonl
    tools/cltopk bench --device gpu -k 1,32,256,1024 --algo auto,bitonic --json > gpu.jsonl
    python3 bench/plot.py -o topk.svg cpu.jsonl [gpu.jsonl ...]

Input: JSON lines of `cltopk bench --json` (fields algo, ran, median_s,
floor_s) and `cltopk bench --cpu --json` (field method, including the peers
std::partial_sort, std::nth_element+sort and numpy.argpartition+sort); any
other line with k, median_s and a method or algo (torch.topk from a script of
your own) is drawn too.  Rows whose status is not "ok" are left out.

One line per method (per device when the files hold several), the median time
in ms against k on log axes, and the read floor (the median of floor_s at each
k: one read of the input, no top-k can be faster) dashed.  --dist and --type
choose the rows (default: the first seen); n must be the same in all of them.

Needs matplotlib (Debian: python3-matplotlib; pip install matplotlib).
"""
import argparse
import json
import statistics
import sys


def load(paths):
    rows = []
    for path in paths:
        with (sys.stdin if path == "-" else open(path)) as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit("plot.py: %s:%d: not JSON: %s" % (path, number, e))
                if row.get("status", "ok") == "ok" and "k" in row and "median_s" in row:
                    rows.append(row)
    return rows


def label(row, devices):
    name = row.get("method")
    if name is None:
        name = row.get("algo", "?")
        if name == "auto":
            name = "auto"   # what auto ran varies with k; the line keeps one name
    return "%s: %s" % (row.get("device", "?"), name) if len(devices) > 1 else name


def main(argv=None):
    ap = argparse.ArgumentParser(description="time against k from cltopk bench --json, as SVG")
    ap.add_argument("files", nargs="+", help="JSON lines files (- for standard input)")
    ap.add_argument("-o", "--output", required=True, help="the SVG file to write")
    ap.add_argument("--dist", help="the distribution to draw (default: the first seen)")
    ap.add_argument("--type", help="the element type to draw (default: the first seen)")
    ap.add_argument("--title", help="the plot's title (default: from the rows)")
    args = ap.parse_args(argv)

    try:
        import matplotlib
        matplotlib.use("svg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot.py: matplotlib is not installed (Debian: apt-get install "
                 "python3-matplotlib; or pip install matplotlib); no plot written")

    rows = load(args.files)
    if not rows:
        sys.exit("plot.py: no timed rows (status ok, with k and median_s) in %s"
                 % " ".join(args.files))
    dist = args.dist or rows[0].get("dist")
    typ = args.type or rows[0].get("type")
    rows = [r for r in rows if r.get("dist") == dist and r.get("type") == typ]
    if not rows:
        sys.exit("plot.py: no rows of dist %s and type %s" % (dist, typ))
    sizes = {r.get("n") for r in rows}
    if len(sizes) > 1:
        sys.exit("plot.py: the rows have several n (%s): one plot is for one n"
                 % ", ".join(map(str, sorted(sizes))))
    devices = {r.get("device") for r in rows}

    series, floors = {}, {}
    for r in rows:
        series.setdefault(label(r, devices), {}).setdefault(r["k"], []).append(r["median_s"])
        # the floor of all threads (the 1-thread heap row reads on one thread)
        if r.get("floor_s") and r.get("threads", "all") == "all" and "::" not in label(
                r, devices) and "numpy" not in label(r, devices):
            floors.setdefault((r.get("device"), r["k"]), []).append(r["floor_s"])

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for name in sorted(series):
        ks = sorted(series[name])
        ax.plot(ks, [statistics.median(series[name][k]) * 1e3 for k in ks], marker="o",
                markersize=3, linewidth=1.2, label=name)
    for device in sorted(devices, key=str):
        ks = sorted(k for d, k in floors if d == device)
        if ks:
            ax.plot(ks, [statistics.median(floors[(device, k)]) * 1e3 for k in ks], "k--",
                    linewidth=1, label="read floor" + (": %s" % device if len(devices) > 1
                                                       else ""))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("k")
    ax.set_ylabel("median time (ms)")
    n = sizes.pop()
    ax.set_title(args.title or "top-k of n = %s %s (%s) on %s"
                 % (("2^%d" % (n.bit_length() - 1)) if n and n & (n - 1) == 0 else n, typ, dist,
                    ", ".join(sorted(map(str, devices)))), fontsize=10)
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(args.output, format="svg", metadata={"Date": None})
    print("plot.py: wrote %s (%d rows, %d lines)" % (args.output, len(rows), len(series)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
