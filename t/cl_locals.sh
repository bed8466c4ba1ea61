#!/bin/sh
# t/cl_locals.sh - the kernel files against two portability rules, checked by
# compiling each one alone with the host's clang (skipped where no clang
# compiles OpenCL C):
#   1. every cl/*.cl compiles on its own with its defaults (the -D options the
#      library passes only specialise it);
#   2. no kernel declares a __local variable whose every use folds away once
#      the kernel is inlined and its constants propagated: POCL 5 and 6 abort
#      on such a kernel (an assertion in isAutomaticLocal,
#      "isGVarUsedByFunction(&Var, F) == true", removed in POCL 7), which
#      t/multi.t met on a POCL 5 machine.  A local present at -O0 and gone at
#      -O2 with unbounded inlining is such a variable.
# Besides the defaults, the variants the library builds where they change
# which locals are live (radix_select.cl: LASTG 0 and 1; sample_filter.cl:
# BAND, RANGE, 64-bit keys).
LC_ALL=C
export LC_ALL
srcdir=${srcdir:-.}
n=0
failed=0
ok() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
cc=
for c in ${CLTOPK_CLANG:-clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14}; do
    if command -v "$c" >/dev/null 2>&1 &&
        echo '__kernel void k(__global int *a) { a[0] = 1; }' |
        "$c" -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -target x86_64-unknown-linux-gnu \
            -emit-llvm -S -o /dev/null - >/dev/null 2>&1; then
        cc=$c
        break
    fi
done
if [ -z "$cc" ]; then
    echo "1..0 # SKIP no clang that compiles OpenCL C (set CLTOPK_CLANG)"
    exit 0
fi
tmp=$(mktemp -d "${CLTOPK_TEST_TMPDIR:-${TMPDIR:-/tmp}}/cl_locals.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# $1 the file, then -D options: the locals gone at -O2 on stdout
compile() {
    f=$1
    shift
    "$cc" -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -target x86_64-unknown-linux-gnu \
        -I "$srcdir/cl" -emit-llvm -S "$@" "$srcdir/cl/$f" -o "$tmp/o0.ll" -O0 \
        >"$tmp/err" 2>&1 || return 1
    "$cc" -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -target x86_64-unknown-linux-gnu \
        -I "$srcdir/cl" -emit-llvm -S "$@" "$srcdir/cl/$f" -o "$tmp/o2.ll" -O2 \
        -mllvm -inline-threshold=100000 >"$tmp/err" 2>&1 || return 1
    # kernel locals are globals named kernel.variable
    grep -oE '^@[A-Za-z_][A-Za-z_0-9]*\.[A-Za-z_][A-Za-z_0-9]*' "$tmp/o0.ll" | sort -u |
        while read -r g; do
            grep -qE "^$g( |\\.)" "$tmp/o2.ll" || echo "${g#@}"
        done
}

check() {
    what="$*"
    if dead=$(compile "$@"); then
        ok 0 "$what compiles alone"
        [ -z "$dead" ]
        ok $? "$what: no local whose every use folds away${dead:+ (}$(echo $dead)${dead:+)}"
    else
        ok 1 "$what compiles alone: $(head -3 "$tmp/err" | tr '\n' ' ')"
    fi
}

for p in "$srcdir"/cl/*.cl; do
    f=${p##*/}
    [ "$f" = common.cl ] && continue
    check "$f"
done
check radix_select.cl -DLASTG=1 -DACT=1
check radix_select.cl -DLASTG=0 -DPRE=1
check sample_filter.cl -DBAND=1
check sample_filter.cl -DBAND=1 -DRANGE=1 -DOFS=0
check sample_filter.cl -DBAND=1 -DKEY_BITS=64
echo "1..$n"
[ "$failed" -eq 0 ]
