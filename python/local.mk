# python/local.mk - the Python package (python/): its files in the tarball, and
# `make check-python`, which installs it into a fresh virtual environment against
# this build's library and runs its tests.  Included from the top Makefile.am.
#
# check-python is separate from `make check` (it needs Python's build tools:
# Debian python3-cffi python3-dev python3-venv python3-pytest python3-setuptools
# python3-wheel python3-numpy, which ./bootstrap installs).  The package is
# copied to the build tree first (pip builds in place; the source tree may be
# read-only, as under distcheck).  PYTHON names the interpreter (python3; give
# PYTHON=/usr/bin/python3 where another python3, without Debian's packages,
# comes first in PATH).
#
# pyopencl (for test_pyopencl_round_trip) is installed into the venv from PyPI.
# Without a network that install fails, is said so, and the test skips; when it
# succeeds the test runs with CLTOPK_TEST_PYOPENCL=1, so that a pyopencl that
# does not import then fails instead of skipping.  Pytest lists every skip (-rs).

PYTHON_FILES = python/pyproject.toml python/setup.py python/build_ffi.py python/README.md \
	python/cltopk/__init__.py python/cltopk/__init__.pyi python/cltopk/__main__.py \
	python/cltopk/py.typed python/tests/test_cltopk.py
EXTRA_DIST += $(PYTHON_FILES) bench/vs_numpy.py bench/py_vs_c.py bench/py-wheels.sh
PYTHON = python3

check-python: all
	rm -rf python-venv python-pkg
	$(MKDIR_P) python-pkg t/tmp
	cd $(srcdir)/python && cp -R pyproject.toml setup.py build_ffi.py README.md cltopk tests \
	  "$(abs_top_builddir)/python-pkg/"
	chmod -R u+w python-pkg
	$(PYTHON) -m venv --system-site-packages python-venv
	CLTOPK_BUILD_DIR='$(abs_top_builddir)' CLTOPK_SOURCE_DIR='$(abs_top_srcdir)' \
	  python-venv/bin/python -m pip install -q --no-build-isolation --no-deps ./python-pkg
	rm -f python-venv/pyopencl-installed
	if python-venv/bin/python -m pip install -q --retries 1 --timeout 30 pyopencl; then \
	  touch python-venv/pyopencl-installed; \
	else \
	  echo "check-python: pyopencl could not be installed: test_pyopencl_round_trip skips" >&2; \
	fi
	@# from t/tmp: the package's source directory must not shadow the installed one
	cd t/tmp && CLTOPK_TEST_PYOPENCL=$$(test -f "$(abs_top_builddir)/python-venv/pyopencl-installed" && echo 1) \
	  POCL_CACHE_DIR="$${POCL_CACHE_DIR:-$(abs_top_builddir)/t/tmp/pocl}" \
	  OMP_WAIT_POLICY="$${OMP_WAIT_POLICY:-passive}" CLTOPK_CACHE=0 \
	  CLTOPK_CACHE_DIR='$(abs_top_builddir)/t/tmp/cache' \
	  "$(abs_top_builddir)/python-venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
	  "$(abs_top_builddir)/python-pkg/tests"
.PHONY: check-python
clean-local: clean-python
clean-python:
	rm -rf python-venv python-pkg
.PHONY: clean-python
