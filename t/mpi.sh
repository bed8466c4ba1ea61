#!/bin/sh
# t/mpi.sh - run t/mpi.t (libcltopk_mpi against the oracle) under $MPIEXEC with
# 1, 2, 3 and 4 ranks, and the cltopk-mpi command on a file against `cltopk
# topk` / `cltopk select` of the whole file; one TAP stream.  Skips when
# configure found no MPI (MPIEXEC empty, t/mpi.t not built).  Open MPI runs as
# root only with --allow-run-as-root, and more ranks than cores only with
# --oversubscribe; both are added for it.  One OpenMP thread a rank.
n=0
failed=0
if [ -z "${MPIEXEC:-}" ] || ! [ -x t/mpi.t ]; then
    echo "1..0 # SKIP MPI was not configured (configure --with-mpi)"
    exit 0
fi
set -- $MPIEXEC
if "$MPIEXEC" --version 2>&1 | grep -qi "Open MPI\|OpenRTE\|open-mpi"; then
    set -- "$@" --oversubscribe
    [ "$(id -u)" = 0 ] && set -- "$@" --allow-run-as-root
fi
OMP_NUM_THREADS=1
export OMP_NUM_THREADS
tmp=$(mktemp -d "${CLTOPK_TEST_TMPDIR:-${TMPDIR:-/tmp}}/mpi.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
ok() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
# the test program: its TAP lines renumbered into this stream
for np in 1 2 3 4; do
    "$@" -np $np t/mpi.t > "$tmp/out" 2> "$tmp/err"
    rc=$?
    total=0
    bad=0
    while IFS= read -r line; do
        case $line in
        "ok "*"# "[sS][kK][iI][pP]*) n=$((n + 1)); total=$((total + 1))
                echo "ok $n # SKIP np=$np: ${line#*# [sS][kK][iI][pP] }" ;;
        "ok "*) n=$((n + 1)); total=$((total + 1))
                echo "ok $n - np=$np: ${line#ok [0-9]* - }" ;;
        "not ok "*) n=$((n + 1)); total=$((total + 1)); bad=$((bad + 1)); failed=$((failed + 1))
                echo "not ok $n - np=$np: ${line#not ok [0-9]* - }" ;;
        "#"*) echo "$line" ;;
        esac
    done < "$tmp/out"
    plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$tmp/out" | head -n 1)
    [ $rc -eq 0 ] && [ "$plan" = "$total" ] && [ $total -gt 0 ]
    ok $? "np=$np: t/mpi.t exits 0 with all $total of its tests run (plan ${plan:-none})"
    [ $rc -eq 0 ] || sed 's/^/# stderr: /' "$tmp/err" | head -n 20
done

# the command: every rank reads its slice of one file
cli=./tools/cltopk
mpi=./tools/cltopk-mpi
"$cli" gen -t f32 -n 10007 -d few "$tmp/d.f32" > /dev/null 2>&1
ok $? "cltopk gen makes a file"
for np in 1 3; do
    for args in "topk -k 50" "topk -k 50 --smallest" "select -r 5003" "select -r 0 --smallest"; do
        # shellcheck disable=SC2086
        "$@" -np $np "$mpi" $args "$tmp/d.f32" > "$tmp/m" 2> "$tmp/err"
        rc=$?
        # shellcheck disable=SC2086
        "$cli" $args --device cpu "$tmp/d.f32" > "$tmp/c" 2>&1
        sed -n '/^ *rank  *index/,$p' "$tmp/m" > "$tmp/m2"
        sed -n '/^ *rank  *index/,$p' "$tmp/c" > "$tmp/c2"
        [ $rc -eq 0 ] && [ -s "$tmp/m2" ] && cmp -s "$tmp/m2" "$tmp/c2"
        ok $? "np=$np: cltopk-mpi $args prints what cltopk prints for the whole file"
    done
    "$@" -np $np "$mpi" topk -k 10008 "$tmp/d.f32" > "$tmp/m" 2> "$tmp/err"
    [ $? -eq 1 ] && grep -q "status -5" "$tmp/err"
    ok $? "np=$np: cltopk-mpi topk with k > n fails with the k-range error"
done
echo "1..$n"
[ $failed -eq 0 ]
