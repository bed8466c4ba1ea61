#!/bin/sh
# t/query_numpy.sh - `cltopk query` against a numpy evaluation of cltopk.h's
# typing rules (t/query_ref.py); skipped where python3 or numpy is missing.
# Run from the build directory (make check does).  CLTOPK_TEST_SEED repeats a
# run; make check-full (CLTOPK_TEST_FULL=1) runs more queries.
CLTOPK=${CLTOPK:-./tools/cltopk}
export CLTOPK
here=$(dirname "$0")
# the first python3 that has numpy: $PYTHON, the one in PATH, then the
# system's (a pyenv or /usr/local python3 first in PATH does not see Debian's
# python3-numpy, which bootstrap installs)
py=
for p in ${PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' >/dev/null 2>&1; then
        py=$p
        break
    fi
done
if [ -z "$py" ]; then
    echo "1..0 # SKIP python3 with numpy is missing (Debian: apt-get install python3-numpy)"
    exit 0
fi
# a few queries from a fixed seed (the same every run), then the run's own
# from a fresh seed (or CLTOPK_TEST_SEED); both seeds are printed
seed=${CLTOPK_TEST_SEED:-$$}
count=40
fixed_seed=20170514
fixed_count=10
case ${CLTOPK_TEST_FULL:-0} in 0 | "") ;; *) count=300 ;; esac
exec "$py" "$here/query_ref.py" "$seed" "$count" "$fixed_seed" "$fixed_count"
