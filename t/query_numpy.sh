#!/bin/sh
# t/query_numpy.sh - `cltopk query` against a numpy evaluation of cltopk.h's
# typing rules (t/query_ref.py); skipped where python3 or numpy is missing.
# Run from the build directory (make check does).  CLTOPK_TEST_SEED repeats a
# run; make check-full (CLTOPK_TEST_FULL=1) runs more queries.
CLTOPK=${CLTOPK:-./tools/cltopk}
export CLTOPK
here=$(dirname "$0")
if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import numpy' >/dev/null 2>&1; then
    echo "1..0 # SKIP python3 with numpy is missing (Debian: apt-get install python3-numpy)"
    exit 0
fi
seed=${CLTOPK_TEST_SEED:-$$}
count=40
case ${CLTOPK_TEST_FULL:-0} in 0 | "") ;; *) count=300 ;; esac
exec python3 "$here/query_ref.py" "$seed" "$count"
