"""Build of the cltopk Python package: the cffi extension cltopk._cltopk.

The C library is found, in this order:
  1. CLTOPK_BUILD_DIR: an Autotools build directory of cltopk (holding
     .libs/libcltopk.so and include/cltopk_version.h); the header comes from
     the source tree, CLTOPK_SOURCE_DIR (default: the directory above this
     python/), and the extension gets a run path to the build directory's .libs;
  2. pkg-config cltopk: the installed library (PKG_CONFIG_PATH is honoured);
  3. the source tree around python/ when it has been built in place
     (./bootstrap or ./configure && make), as in 1.
"""
import os
import shlex
import subprocess
import sys

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.environ.get("CLTOPK_SOURCE_DIR") or os.path.dirname(HERE))


def build_tree(build_dir):
    libs = os.path.join(build_dir, ".libs")
    if not os.path.exists(os.path.join(libs, "libcltopk.so")):
        return None
    return {"include": [os.path.join(SRC, "include"), os.path.join(build_dir, "include")],
            "libdirs": [libs], "rpath": [libs]}


def pkg_config():
    try:
        out = subprocess.run(["pkg-config", "--cflags", "--libs", "cltopk"], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    paths = {"include": [], "libdirs": [], "rpath": []}
    for word in shlex.split(out):
        if word.startswith("-I"):
            paths["include"].append(word[2:])
        elif word.startswith("-L"):
            paths["libdirs"].append(word[2:])
    return paths


def cltopk_paths():
    explicit = os.environ.get("CLTOPK_BUILD_DIR")
    if explicit:
        found = build_tree(os.path.abspath(explicit))
        if not found:
            sys.exit("setup.py: CLTOPK_BUILD_DIR=%s holds no .libs/libcltopk.so "
                     "(run make there first)" % explicit)
        return found
    found = pkg_config() or build_tree(SRC)
    if not found:
        sys.exit("setup.py: cltopk not found: install it (make install; pkg-config cltopk "
                 "must work), or build it in the source tree around python/ "
                 "(./bootstrap), or set CLTOPK_BUILD_DIR to a build directory")
    return found


paths = cltopk_paths()
os.environ["_CLTOPK_INCLUDE_DIRS"] = os.pathsep.join(paths["include"])
os.environ["_CLTOPK_LIBRARY_DIRS"] = os.pathsep.join(paths["libdirs"])
os.environ["_CLTOPK_RPATH"] = os.pathsep.join(paths["rpath"])

setup(cffi_modules=["build_ffi.py:ffibuilder"])
