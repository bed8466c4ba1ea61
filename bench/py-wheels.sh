#!/bin/sh
# py-wheels.sh - download, on a machine with a network, the wheels that
# bench/gpu-run.sh's step pyocl installs with no network: pyopencl and what it
# needs (pytools, platformdirs, siphash24, typing_extensions, numpy), cffi and
# pycparser (the package's extension), setuptools and wheel (to build it), and
# pip itself (a venv made without ensurepip gets it from its wheel).
#
#   bench/py-wheels.sh DIR [PYTHON_VERSION...]     (default: 3.12, Ubuntu 24.04's)
#
# Binary wheels only, for CPython on x86-64 Linux (manylinux, glibc 2.17 to
# 2.28: Ubuntu 24.04 has 2.39), one set a Python version.  pip resolves the
# dependencies of the newest releases; the list printed at the end is what
# DIR holds.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 DIR [PYTHON_VERSION...]" >&2; exit 2; }
dir=$1
shift
[ $# -ge 1 ] || set -- 3.12
mkdir -p "$dir"
for v in "$@"; do
    abi=cp$(echo "$v" | tr -d .)
    python3 -m pip download -q --dest "$dir" --only-binary=:all: \
        --python-version "$v" --implementation cp --abi "$abi" --abi abi3 --abi none \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        --platform any \
        pyopencl cffi pycparser numpy setuptools wheel pip
done
ls -l "$dir"
du -sh "$dir"
