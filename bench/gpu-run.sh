#!/bin/bash
# gpu-run.sh - build, test and benchmark cltopk on a machine with an NVIDIA GPU,
# from a release tarball (that machine may lack libtool: build the tarball with
# `make dist` elsewhere and put it in .gpu/).  Logs and tables go to $OUT.
#
#   bench/gpu-run.sh [TARBALL]       (default: the newest .gpu/cltopk-*.tar.gz)
#
# GPU_RUN_STEPS picks the steps (default: all of them, which may take longer
# than one 10-minute call allows): check poclcheck onepass cmds sffb sfx sortx band bandx bracket medianx rows rowsx rowssf query querysf prof knnx demo bitonic keysonly dist
# ablation paper torch tune unpack sbp tree cpu index stream multi pyocl mpi multigpu; and compare (with
# BASE_TARBALL: the same benchmark rows from that release, built beside, for a
# before/after table).
#
# Steps: register NVIDIA's OpenCL driver with the ICD loader (it is often
# installed without an ICD file), unpack, configure, make, `cltopk devices`,
# `make check` (the OpenCL tests on the GPU), `cltopk demo`, the bitonic
# benchmarks next to the read floor (k sweep, distributions, the ablation of the
# optimizations and the paper's grid), bench/vs_torch.py (torch.topk on the same
# data in the same process) when torch is importable, and `cltopk tune`.
set -u -o pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
src=$(cd "$(dirname "$0")/.." && pwd)
tarball=${1:-$(ls -t "$src"/.gpu/cltopk-*.tar.gz 2>/dev/null | head -n1)}
[ -f "$tarball" ] || { echo "gpu-run: no tarball (run make dist, copy it to .gpu/)" >&2; exit 1; }
jobs=$(nproc)
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
steps=" ${GPU_RUN_STEPS:-check poclcheck demo bitonic keysonly dist ablation paper torch tune unpack sbp tree cpu} "
want() { case "$steps" in *" $1 "*) return 0 ;; esac; return 1; }
rc=0

icd=$(mktemp -d)
echo libnvidia-opencl.so.1 >"$icd/nvidia.icd"
cp /etc/OpenCL/vendors/*.icd "$icd/" 2>/dev/null
export OCL_ICD_VENDORS=$icd
export CLTOPK_CACHE_DIR=$(mktemp -d)

work=$(mktemp -d)
tar xzf "$tarball" -C "$work"
cd "$work"/cltopk-* || exit 1
log "build $(basename "$tarball") on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
{ ./configure && make -j"$jobs"; } >"$OUT/build.log" 2>&1 || { log "BUILD FAILED"; tail -50 "$OUT/build.log"; exit 1; }

tools/cltopk devices >"$OUT/devices.txt" 2>&1
cat "$OUT/devices.txt"

if want check; then
    log "make check (OpenCL tests on the GPU: CLTOPK_TEST_DEVICE=gpu)"
    # CHECK_TESTS: only these tests (e.g. "t/band.t t/sample_filter.t")
    CLTOPK_TEST_DEVICE=gpu timeout ${CHECK_TIMEOUT:-560} make -j"$jobs" ${CHECK_TARGET:-check-full} \
        ${CHECK_TESTS:+TESTS="$CHECK_TESTS"} >"$OUT/check.log" 2>&1
    rc=$?
    grep -E "^(# |PASS|FAIL|ERROR|SKIP|XFAIL)" "$OUT/check.log" | tail -25 | tee -a "$OUT/summary.txt"
    for f in t/*.log; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done >"$OUT/test-logs.txt" 2>/dev/null
    log "make check exit $rc"
fi

if want poclcheck; then
    # the whole suite on this machine's POCL (Ubuntu 24.04: POCL 5), by name;
    # POCL_TESTS: only these tests
    log "make check on POCL (CLTOPK_TEST_DEVICE=Portable)"
    CLTOPK_TEST_DEVICE=Portable timeout ${POCL_TIMEOUT:-560} make -j"$jobs" check \
        ${POCL_TESTS:+TESTS="$POCL_TESTS"} >"$OUT/check-pocl.log" 2>&1
    prc=$?
    grep -E "^(# |FAIL|ERROR)" "$OUT/check-pocl.log" | tail -40 | tee -a "$OUT/summary.txt"
    for f in t/*.log; do [ -f "$f" ] && grep -q -E "^(not ok|Bail)" "$f" &&
        { echo "--- $f"; grep -E -B2 -A6 "^(not ok|Bail)" "$f" | head -80; }; done \
        >"$OUT/pocl-failures.txt" 2>/dev/null
    log "make check on POCL exit $prc"
    [ $prc -eq 0 ] || rc=$prc
fi

if want compare && [ -f "${BASE_TARBALL:-}" ]; then
    # the same rows from the release before the change, built beside this one
    base=$(mktemp -d)
    tar xzf "$BASE_TARBALL" -C "$base"
    (cd "$base"/cltopk-* && ./configure && make -j"$jobs") >"$OUT/build-base.log" 2>&1 ||
        log "base build failed"
    bt=$(ls -d "$base"/cltopk-*)/tools/cltopk
    for a in ${COMPARE_ALGOS:-bitonic sbp-radix sbp-tree radix-select auto}; do
        for b in "$bt" tools/cltopk; do
            log "compare $a: $( [ "$b" = "$bt" ] && echo before || echo after)"
            "$b" bench --device gpu -t f32 -n 2^29 -k ${COMPARE_K:-1,32,256,1024} --algo $a \
                --reps 7 2>&1 | grep -v -E "^(device|data|dist|$)" | tee -a "$OUT/summary.txt" "$OUT/compare.txt"
        done
    done
fi

# ---- top-k in one read (issue 11): AUTO, sample-filter, sort, selection
if want onepass; then
    py="python3 $src/bench/vs_torch.py --lib .libs/libcltopk.so --n 536870912 --reps 7"
    if python3 -c 'import torch, numpy; assert torch.cuda.is_available()' 2>/dev/null; then
        log "vs torch.topk: auto, f32, keys + index (k up to n/2)"
        $py --algo auto --k 1,8,32,128,256,1024,2048,4096,8192,16384,65536,1048576,268435456 2>&1 |
            tee -a "$OUT/summary.txt" "$OUT/onepass.txt"
        log "vs torch.topk: sample-filter, f32"
        $py --algo sample-filter --k 1,32,256,1024,4096 2>&1 | tee -a "$OUT/summary.txt" "$OUT/onepass.txt"
        log "vs torch.topk: auto, i32, keys + index"
        $py --algo auto --dtype i32 --k 1,32,256,4096 2>&1 | tee -a "$OUT/summary.txt" "$OUT/onepass.txt"
        log "vs torch.topk: auto, f32, keys only"
        $py --algo auto --keys-only --k 1,32,256 2>&1 | tee -a "$OUT/summary.txt" "$OUT/onepass.txt"
        log "sort vs torch.sort (stable), f32 with positions"
        $py --algo sort --k 536870912 --reps 3 2>&1 | tee -a "$OUT/summary.txt" "$OUT/onepass.txt"
        log "selection vs torch.kthvalue: auto, f32 (rank k - 1: k-th, median, last)"
        $py --algo auto --select --k 1,1024,268435456,536870912 --reps 5 2>&1 |
            tee -a "$OUT/summary.txt" "$OUT/onepass.txt"
        for n in 1048576 16777216; do
            log "vs torch.topk: auto, f32, n = $n"
            python3 "$src/bench/vs_torch.py" --lib .libs/libcltopk.so --n $n --reps 20 \
                --algo auto --k 32,1024 2>&1 | tee -a "$OUT/summary.txt" "$OUT/onepass.txt"
        done
    fi
    log "bench: auto and sample-filter, 2^29 f32, distributions"
    tools/cltopk bench --device gpu -t f32 -n 2^29 -k 1,32,256,1024,4096 --algo auto,sample-filter \
        --dist uniform,increasing,decreasing,equal,few,bucket-killer --reps 5 2>&1 |
        tee -a "$OUT/summary.txt" "$OUT/onepass.txt"
    log "bench: selection (rank k - 1: first, 1024th, median, last), 2^29 f32, distributions"
    tools/cltopk bench --device gpu -t f32 -n 2^29 -k 1,1024,268435456,536870912 \
        --algo auto,radix-select --select \
        --dist uniform,increasing,equal,few,bucket-killer --reps 5 2>&1 |
        tee -a "$OUT/summary.txt" "$OUT/onepass.txt"
    log "profile: sample-filter's band selection, 2^29 f32, the median and the 1024th (device times a launch)"
    for k in 268435456 1024; do
        CLTOPK_SAMPLE_FILTER=profile=1 tools/cltopk bench --device gpu -t f32 -n 2^29 -k $k \
            --algo sample-filter --select --reps 1 2>&1 | grep -E "sample-filter n=|ok|error" |
            tail -3 | tee -a "$OUT/summary.txt" "$OUT/onepass.txt"
    done
    log "profile: sample-filter top-k, 2^29 f32, k = 32, 256, 8192 (the band above the sort)"
    for k in 32 256 8192; do
        CLTOPK_SAMPLE_FILTER=profile=1 tools/cltopk bench --device gpu -t f32 -n 2^29 -k $k \
            --algo sample-filter --reps 1 2>&1 | grep -E "sample-filter n=|ok|error" |
            tail -3 | tee -a "$OUT/summary.txt" "$OUT/onepass.txt"
    done
    for t in f64 u64 i32; do
        log "bench: selection, auto, 2^28 $t uniform"
        tools/cltopk bench --device gpu -t $t -n 2^28 -k 1024,134217728 --algo auto --select \
            --reps 5 2>&1 | tee -a "$OUT/summary.txt" "$OUT/onepass.txt"
    done
    for t in f64 u64 i32; do
        # (2^29: the size issue 11's targets name for every type)
        log "bench: auto, 2^29 $t uniform and bucket-killer"
        tools/cltopk bench --device gpu -t $t -n 2^29 -k 1,32,256,4096 --algo auto \
            --dist uniform,bucket-killer --reps 5 2>&1 | tee -a "$OUT/summary.txt" "$OUT/onepass.txt"
    done
    log "planner: explain, 2^29 f32, k = 32 and 1024 (device data)"
    tools/cltopk gen -t f32 -n 2^26 /tmp/ex.f32 2>/dev/null
    for k in 32 4096; do tools/cltopk topk --device gpu -k $k --explain /tmp/ex.f32 2>&1 | head -16 |
        tee -a "$OUT/summary.txt"; done
fi

# ---- one-off measurements: each line of the file GPU_RUN_CMDS (a path
# relative to the source tree; blank lines and # comments skipped) run by bash
# in the build directory, its output logged
if want cmds && [ -f "$src/${GPU_RUN_CMDS:-none}" ]; then
    while IFS= read -r line; do
        case "$line" in '' | '#'*) continue ;; esac
        log "\$ $line"
        (eval "$line") </dev/null 2>&1 | tee -a "$OUT/summary.txt" "$OUT/cmds.txt"
    done <"$src/$GPU_RUN_CMDS"
fi

# ---- the sample filter's exact fallback (issue 11): forced (force=few) on
# the default groups and on one group (fbg=1), against the normal path
if want sffb; then
    for spec in none force=few force=few,fbg=1; do
        log "sample-filter, CLTOPK_SAMPLE_FILTER=$spec: 2^29 f32 uniform"
        CLTOPK_SAMPLE_FILTER=$([ $spec = none ] || echo $spec) timeout 150 tools/cltopk bench \
            --device gpu -t f32 -n 2^29 -k 32,256,4096 --algo sample-filter --reps 3 2>&1 |
            grep --line-buffered -E "^(uniform|sample-filter)|error" | tee -a "$OUT/summary.txt" "$OUT/sffb.txt"
    done
fi

# ---- the band (issue 11): selection at any rank, top-k above the final sort
if want band; then
    log "bench: selection (rank k - 1: first, 1024th, median, last), 2^29 f32, distributions"
    tools/cltopk bench --device gpu -t f32 -n 2^29 -k 1,1024,268435456,536870912 \
        --algo auto --select --dist uniform,increasing,equal,few,bucket-killer --reps 5 2>&1 |
        tee -a "$OUT/summary.txt" "$OUT/band.txt"
    for t in f64 u64 i32; do
        log "bench: selection, auto, 2^28 $t uniform"
        tools/cltopk bench --device gpu -t $t -n 2^28 -k 1024,134217728 --algo auto --select \
            --reps 5 2>&1 | grep -E "auto|unsupp|error" | tee -a "$OUT/summary.txt" "$OUT/band.txt"
    done
    log "profile: the band selection (median, 1024th) and top-k (k = 32, 8192), 2^29 f32"
    for sel in "--select -k 268435456" "--select -k 1024" "-k 32" "-k 8192"; do
        CLTOPK_SAMPLE_FILTER=profile=1 tools/cltopk bench --device gpu -t f32 -n 2^29 $sel \
            --algo sample-filter --reps 1 2>&1 | grep -E "sample-filter n=|error" |
            tail -1 | tee -a "$OUT/summary.txt" "$OUT/band.txt"
    done
    for spec in bs=16384 bs=32768 dense=0 dense=1; do
        log "bench: selection by sample-filter with CLTOPK_SAMPLE_FILTER=$spec, 2^29 f32 uniform"
        CLTOPK_SAMPLE_FILTER=$spec tools/cltopk bench --device gpu -t f32 -n 2^29 \
            -k 1,268435456 --algo sample-filter --select --reps 5 2>&1 |
            grep -E "sample-filter|error" | tee -a "$OUT/summary.txt" "$OUT/band.txt"
    done
    log "bench: top-k above the final sort, 2^29 f32: sample-filter (band), radix-select, sort"
    tools/cltopk bench --device gpu -t f32 -n 2^29 -k 8192,65536,1048576,16777216,268435456 \
        --algo auto,sample-filter,radix-select --dist uniform,increasing,bucket-killer --reps 3 2>&1 |
        tee -a "$OUT/summary.txt" "$OUT/band.txt"
    for t in f64 u64; do
        log "bench: auto, 2^28 $t uniform, k = 2048, 4096, 65536"
        tools/cltopk bench --device gpu -t $t -n 2^28 -k 2048,4096,65536 --algo auto --reps 5 2>&1 |
            grep -E "auto|unsupp|error" | tee -a "$OUT/summary.txt" "$OUT/band.txt"
    done
fi

# ---- queries over columns (issue 14): the paper's three queries, fused and the peer
if want queryt; then
    log "vs_torch: the paper's three queries, 2^28 rows, k = 50"
    python3 "$src/bench/vs_torch.py" --lib .libs/libcltopk.so --query --n 268435456 --k 50 \
        --reps 5 2>&1 | tee -a "$OUT/summary.txt" "$OUT/query.txt"
fi
if want query; then
    for n in 2^24 2^28; do
        log "bench: query, the paper's three queries, $n rows, k = 50"
        tools/cltopk bench --query -n $n -k 50 --device gpu --reps 5 2>&1 |
            tee -a "$OUT/summary.txt" "$OUT/query.txt"
    done
    for spec in spec=0 thr=0; do
        log "bench: query, the paper's three queries, 2^28 rows, k = 50, CLTOPK_QUERY=$spec"
        CLTOPK_QUERY=$spec tools/cltopk bench --query -n 2^28 -k 50 --device gpu --reps 5 2>&1 |
            tee -a "$OUT/summary.txt" "$OUT/query.txt"
    done
    log "vs_torch: the paper's three queries, 2^28 rows, k = 50"
    python3 "$src/bench/vs_torch.py" --lib .libs/libcltopk.so --query --n 268435456 --k 50 \
        --reps 5 2>&1 | tee -a "$OUT/summary.txt" "$OUT/query.txt"
fi

# ---- queries (issue 14): the tile query and the sample-filter query beside the
# device peer (score column + cltopk_topk_buffer) and the read floor, in one run.
# QUERYSF_N (default 2^28), QUERYSF_K (50), QUERYSF_SELS (Q1's selectivities:
# 0,0.1,0.5,1), QUERYSF_REPS (5).  About 2-3 minutes on the H200 (the table's
# generation on the host is most of it).
if want querysf; then
    qn=${QUERYSF_N:-2^28} qk=${QUERYSF_K:-50} qs=${QUERYSF_SELS:-0,0.01,0.05,0.1,0.5,1}
    log "check: t/query_sf.t on the GPU (the sample-filter query, its forced paths, the peer)"
    CLTOPK_TEST_DEVICE=gpu timeout 300 make -j"$jobs" check TESTS="t/query_sf.t" \
        >"$OUT/check-querysf.log" 2>&1
    log "t/query_sf.t exit $? ($(grep -c '^ok' t/query_sf.log 2>/dev/null) ok, $(grep -c '^not ok' t/query_sf.log 2>/dev/null) not ok)"
    # (sf: the lazy read where under 1/32 of the sample passes; then the
    # eager and the lazy read alone, and the sample in smaller groups)
    log "bench: query, $qn rows, k = $qk: fused tile / sf / auto / sf eager / sf lazy / sf srt=4, floor, device peer"
    tools/cltopk bench --query -n $qn -k $qk --device gpu --reps ${QUERYSF_REPS:-5} --q1 $qs \
        --paths tile,sf,auto,sf+lazy=0,sf+lazy=1,sf+srt=4 2>&1 | grep -v "warnings generated" |
        tee -a "$OUT/summary.txt" "$OUT/querysf.txt"
    log "check: the sample-filter query served every query at $qn rows (check=served)"
    CLTOPK_QUERY=check=served tools/cltopk bench --query -n $qn -k $qk --device gpu --reps 1 \
        --q1 $qs --paths sf 2>&1 | tee -a "$OUT/summary.txt" "$OUT/querysf.txt"
    log "profile: the sample-filter query, 2^26 rows, k = $qk"
    CLTOPK_QUERY=path=sf CLTOPK_PROFILE=1 tools/cltopk bench --query -n 2^26 -k $qk \
        --device gpu --reps 1 --q1 0.5 2>&1 | grep -E "^profile: query|Q[0-9]|error" |
        tee -a "$OUT/summary.txt" "$OUT/querysf.txt"
fi

# ---- many rows at once (issue 13): the shapes of the issue, bits beside cpu-heap
if want rows; then
    log "tests on the GPU: t/rows.t (the warp kernel's window and the tile's tmload among its cases)"
    CLTOPK_TEST_DEVICE=gpu timeout 300 make -j"$jobs" check TESTS="t/rows.t" \
        >"$OUT/rows-check.log" 2>&1
    grep -E "^# (TOTAL|PASS|FAIL|ERROR)" "$OUT/rows-check.log" | tee -a "$OUT/summary.txt"
    for shape in "16384 4096 32" "65536 1024 16" "65536 1000 16" "1024 65536 256" "64 131072 50"; do
        set -- $shape
        log "bench: rows $1 x $2, k = $3, f32 (bits, auto)"
        tools/cltopk bench --rows $1 -n $2 -k $3 --device gpu --algo auto,bits --reps 10 2>&1 |
            tee -a "$OUT/summary.txt" "$OUT/rows.txt"
        log "bench: the same with the streaming kernel (CLTOPK_BITS=warp=0,tile=0)"
        CLTOPK_BITS=warp=0,tile=0 tools/cltopk bench --rows $1 -n $2 -k $3 --device gpu \
            --algo bits --reps 10 2>&1 | tee -a "$OUT/summary.txt" "$OUT/rows.txt"
        log "bench: the same with the register tile (CLTOPK_BITS=warp=0)"
        CLTOPK_BITS=warp=0 tools/cltopk bench --rows $1 -n $2 -k $3 --device gpu --algo bits \
            --reps 10 2>&1 | tee -a "$OUT/summary.txt" "$OUT/rows.txt"
        log "bench: the register tile with its loads unconditional (CLTOPK_BITS=warp=0,tmload=1)"
        CLTOPK_BITS=warp=0,tmload=1 tools/cltopk bench --rows $1 -n $2 -k $3 --device gpu \
            --algo bits --reps 10 2>&1 | tee -a "$OUT/summary.txt" "$OUT/rows.txt"
        log "bench: the warp kernel's earlier loads and appends (CLTOPK_BITS=wvec=0,wappend=1)"
        CLTOPK_BITS=wvec=0,wappend=1 tools/cltopk bench --rows $1 -n $2 -k $3 --device gpu \
            --algo bits --reps 10 2>&1 | tee -a "$OUT/summary.txt" "$OUT/rows.txt"
        log "vs_torch: rows $1 x $2, k = $3 (auto)"
        python3 "$src/bench/vs_torch.py" --lib .libs/libcltopk.so --algo auto --rows $1 \
            --n $(($1 * $2)) --k $3 --reps 10 2>&1 | tee -a "$OUT/summary.txt" "$OUT/rows.txt"
    done
    log "bench: segments, power-law lengths 1..100000, 2^26 elements, k = 32"
    tools/cltopk bench --segments -n 2^26 -k 32 --device gpu --algo auto,bits --reps 10 2>&1 |
        tee -a "$OUT/summary.txt" "$OUT/rows.txt"
    CLTOPK_BITS=tile=0 tools/cltopk bench --segments -n 2^26 -k 32 --device gpu --algo bits \
        --reps 10 2>&1 | tee -a "$OUT/summary.txt" "$OUT/rows.txt"
    [ "${ROWS_KNN:-1}" = 1 ] && for d in 32 128; do for k in 10 100; do
        log "bench: knn nq = 1000, np = 2^20, d = $d, k = $k"
        tools/cltopk bench --knn -q 1000 -p 1048576 -d $d -k $k --device gpu --reps 5 2>&1 |
            tee -a "$OUT/summary.txt" "$OUT/rows.txt"
    done; done
    [ "${ROWS_KNN:-1}" = 1 ] && for d in 32 128; do
        log "vs_torch: knn nq = 1000, np = 2^20, d = $d (torch.cdist + torch.topk)"
        python3 "$src/bench/vs_torch.py" --lib .libs/libcltopk.so --knn 1000,1048576,$d \
            --k 10,100 --reps 5 2>&1 | tee -a "$OUT/summary.txt" "$OUT/rows.txt"
    done
fi

# ---- the register tile's shape: variants of CLTOPK_BITS (issue 13)
if want rowsx; then
    for spec in "16384 4096 32:wg=256,rt=16 wg=128,rt=32 wg=512,rt=8 wg=1024,rt=4 maxima=0" \
                "65536 1024 16:rt=16 rt=8 rt=32 rt=4 maxima=0" \
                "1024 65536 256:tkmax=128 tkmax=4096 tkmax=4096,wg=1024,rt=16 tkmax=4096,rt=32" \
                "64 131072 50:rt=16 rt=32 rt=8"; do
        shape=${spec%%:*}
        set -- $shape
        for v in ${spec#*:}; do
            printf "rows %s x %s k=%s CLTOPK_BITS=%-28s " $1 $2 $3 "$v" | tee -a "$OUT/summary.txt" "$OUT/rowsx.txt"
            CLTOPK_BITS=$v tools/cltopk bench --rows $1 -n $2 -k $3 --device gpu --algo bits \
                --reps 10 2>&1 | grep -E "bits|error" | sed 's/.*bits *//' |
                tee -a "$OUT/summary.txt" "$OUT/rowsx.txt"
        done
    done
fi

# ---- the sample filter of long dense rows against the paths before it (issue 13):
# auto (now the sample filter at 1024 x 65536, k = 256; the tile elsewhere),
# path=nosf (the tile or the streaming kernel, as before), path=sf (forced),
# its sample and part sizes, a check that every row was served, and each
# launch's device time
if want rowssf; then
    for spec in "1024 65536 256:path=nosf path=sf path=sf,fuse=0 path=sf,s=2048 path=sf,s=512 path=sf,sfpart=8192 path=sf,sfpart=32768 path=sf,fuse=0,sfpart=32768" \
                "64 131072 50:path=nosf path=sf path=sf,fuse=0 path=sf,sfpart=8192" \
                "16384 4096 32:path=nosf path=sf"; do
        shape=${spec%%:*}
        set -- $shape
        log "bench: rows $1 x $2, k = $3, f32 (auto, bits): the sample filter"
        tools/cltopk bench --rows $1 -n $2 -k $3 --device gpu --algo auto,bits --reps 10 2>&1 |
            tee -a "$OUT/summary.txt" "$OUT/rowssf.txt"
        for v in ${spec#*:}; do
            printf "rows %s x %s k=%s CLTOPK_BITS=%-28s " $1 $2 $3 "$v" | tee -a "$OUT/summary.txt" "$OUT/rowssf.txt"
            CLTOPK_BITS=$v tools/cltopk bench --rows $1 -n $2 -k $3 --device gpu --algo bits \
                --reps 10 2>&1 | grep -E "bits|error" | sed 's/.*bits *//' |
                tee -a "$OUT/summary.txt" "$OUT/rowssf.txt"
        done
        log "check: the sample filter served every row (check=served), rows $1 x $2, k = $3"
        CLTOPK_BITS=path=sf,check=served tools/cltopk bench --rows $1 -n $2 -k $3 --device gpu \
            --algo bits --reps 3 2>&1 | grep -E "bits|error|check" | tee -a "$OUT/summary.txt" "$OUT/rowssf.txt"
        log "profile: rows $1 x $2, k = $3, bits, path=sf"
        CLTOPK_BITS=path=sf CLTOPK_PROFILE=1 tools/cltopk bench --rows $1 -n $2 -k $3 \
            --device gpu --algo bits --reps 2 2>&1 | grep -E "^profile: rows|rows_sf|bits|error" |
            tail -4 | tee -a "$OUT/summary.txt" "$OUT/rowssf.txt"
    done
fi

# ---- kNN distance tiles: variants of CLTOPK_KNN (issue 13)
if want knnx; then
    for spec in tile=0 "" tq=128,tp=128,mq=8,mp=8 tq=64,tp=64,mq=4,mp=4 sample=16384 \
                tq=128,tp=64,mq=8,mp=4 dc=32; do
        for d in 32 128; do
            log "bench: knn nq = 1000, np = 2^20, d = $d, k = 10 and 100, CLTOPK_KNN=$spec"
            for k in 10 100; do
                CLTOPK_KNN=$spec tools/cltopk bench --knn -q 1000 -p 1048576 -d $d -k $k \
                    --device gpu --reps 3 2>&1 | grep -E "knn|error" |
                    tee -a "$OUT/summary.txt" "$OUT/knnx.txt"
            done
        done
    done
    tools/cltopk knn --help >/dev/null 2>&1 && { tools/cltopk gen -t f32 -n 1048576 /tmp/p.f32 &&
        tools/cltopk gen -t f32 -n 32000 /tmp/q.f32 && tools/cltopk knn -k 10 -d 32 --device gpu \
        --explain /tmp/q.f32 /tmp/p.f32 2>&1 | head -8 | tee -a "$OUT/summary.txt"; }
fi

# ---- per-launch device times (CLTOPK_PROFILE=1) of the many-rows and query calls
if want prof; then
    for shape in "16384 4096 32" "65536 1024 16" "65536 1000 16" "1024 65536 256" "64 131072 50"; do
        set -- $shape
        for tile in 1 0; do
            log "profile: rows $1 x $2, k = $3, bits, tile=$tile"
            CLTOPK_BITS=tile=$tile CLTOPK_PROFILE=1 tools/cltopk bench --rows $1 -n $2 -k $3 \
                --device gpu --algo bits --reps 2 2>&1 | grep -E "^profile: rows|bits|error" |
                tail -2 | tee -a "$OUT/summary.txt" "$OUT/prof.txt"
        done
    done
    log "profile: segments, power-law lengths, 2^26 elements, k = 32"
    CLTOPK_PROFILE=1 tools/cltopk bench --segments -n 2^26 -k 32 --device gpu --algo bits \
        --reps 2 2>&1 | grep -E "^profile: rows|bits|error" | tail -2 |
        tee -a "$OUT/summary.txt" "$OUT/prof.txt"
    log "profile: query, 2^26 rows, k = 50"
    CLTOPK_PROFILE=1 tools/cltopk bench --query -n 2^26 -k 50 --device gpu --reps 1 2>&1 |
        grep -E "^profile: query|Q[0-9]|error" | tee -a "$OUT/summary.txt" "$OUT/prof.txt"
    log "profile: knn nq = 1000, np = 2^20, d = 32, k = 10"
    CLTOPK_PROFILE=1 tools/cltopk bench --knn -q 1000 -p 1048576 -d 32 -k 10 --device gpu \
        --reps 1 2>&1 | grep -E "^profile: rows|knn|error" | tail -2 |
        tee -a "$OUT/summary.txt" "$OUT/prof.txt"
fi

# ---- experiments on sample-filter's tile order and its stages (issue 11)
if want sfx; then
    B="tools/cltopk bench --device gpu -t f32 -n 2^29"
    # SFX_PROF, SFX_SPECS, SFX_TAIL: CLTOPK_SAMPLE_FILTER settings to profile,
    # to time on three distributions and keys only, and to time on uniform
    for spec in ${SFX_PROF:-seed=1 groups=1056}; do
        for k in 1 32 256 4096; do
            log "profile: sample-filter $spec k = $k"
            CLTOPK_SAMPLE_FILTER=$spec,profile=1 $B -k $k --algo sample-filter --reps 3 2>&1 |
                grep -E "^sample-filter|uniform" | tail -2 | tee -a "$OUT/summary.txt" "$OUT/sfx.txt"
        done
    done
    for spec in ${SFX_SPECS:-seed=1 groups=1056}; do
        log "sample-filter $spec: uniform, increasing, bucket-killer"
        CLTOPK_SAMPLE_FILTER=$spec $B -k 1,32,256,1024,4096 --algo sample-filter \
            --dist uniform,increasing,bucket-killer --reps 7 2>&1 | grep -E "^(uniform|incr|bucket)" |
            tee -a "$OUT/summary.txt" "$OUT/sfx.txt"
        log "sample-filter $spec: keys only"
        CLTOPK_SAMPLE_FILTER=$spec $B -k 32,256 --algo sample-filter --keys-only --reps 7 2>&1 |
            grep -E "^uniform" | tee -a "$OUT/summary.txt" "$OUT/sfx.txt"
    done
    for spec in ${SFX_TAIL:-}; do
        log "sample-filter $spec: uniform"
        CLTOPK_SAMPLE_FILTER=$spec $B -k 32,256,1024,4096 --algo sample-filter --reps 7 2>&1 |
            grep -E "^uniform" | tee -a "$OUT/summary.txt" "$OUT/sfx.txt"
    done
    log "profile: the sort, 2^29 f32 with positions"
    CLTOPK_PROFILE=1 $B -k 536870912 --algo sort --reps 2 2>&1 | tail -3 |
        tee -a "$OUT/summary.txt" "$OUT/sfx.txt"
fi

# ---- the device sort's settings (issue 11): SORTX_SPECS are CLTOPK_SORT values
# ("-" the defaults), each timed on 2^29 f32 with positions, uniform and equal
if want sortx; then
    B="tools/cltopk bench --device gpu -t f32 -n 2^29"
    for spec in ${SORTX_SPECS:-- pf=1 wg=128,gpc=8 ipt=16,ld=0}; do
        log "sort, CLTOPK_SORT=$spec: ${SORTX_DIST:=uniform,equal}"
        if [ "$spec" = - ]; then unset CLTOPK_SORT; else export CLTOPK_SORT=$spec; fi
        timeout 90 $B -k 536870912 --algo sort --dist $SORTX_DIST --reps 3 2>&1 |
            grep -E "^(uniform|equal)|error" | tee -a "$OUT/summary.txt" "$OUT/sortx.txt"
        unset CLTOPK_SORT
    done
    log "profile: the sort, 2^29 f32 with positions (defaults)"
    CLTOPK_PROFILE=1 $B -k 536870912 --algo sort --reps 1 2>&1 | grep -m1 "profile: ds_" |
        tee -a "$OUT/summary.txt" "$OUT/sortx.txt"
    log "registers of the sort's kernels (-cl-nv-verbose)"
    CLTOPK_BUILD_OPTIONS=-cl-nv-verbose CLTOPK_SHOW_BUILD_LOG=1 CLTOPK_CACHE=0 \
        tools/cltopk bench --device gpu -t f32 -n 2^16 -k 65536 --algo sort --reps 1 2>&1 |
        grep -E "Function properties|registers|ds_" | head -12 | tee -a "$OUT/summary.txt" "$OUT/sortx.txt"
fi

# ---- the selection's settings (issue 11): the band filter's range test (range),
# the band's bounds through the bracket (bm=, off by default until measured
# here): the tests, then the selections of 2^29 f32 with the one-step bounds
# (the default, bs 65536) against bm=16 at bs 262144 and 131072, and the
# median's launches with each
if want bracket; then
    log "tests on the GPU: t/band.t, t/sample_filter.t, t/select.t (the bracket among their cases)"
    CLTOPK_TEST_DEVICE=gpu timeout 400 make -j"$jobs" check \
        TESTS="t/band.t t/sample_filter.t t/select.t" >"$OUT/bracket-check.log" 2>&1
    grep -E "^# (TOTAL|PASS|FAIL|ERROR)" "$OUT/bracket-check.log" | tee -a "$OUT/summary.txt"
    for sf in none bm=16,bs=262144 bm=16,bs=131072 bm=8,bs=262144 none; do
        log "bench: selection, 2^29 f32, CLTOPK_SAMPLE_FILTER=$sf"
        CLTOPK_SAMPLE_FILTER=$([ $sf = none ] || echo $sf) timeout 120 tools/cltopk bench \
            --device gpu -t f32 -n 2^29 -k 4097,268435456,402653184 --algo auto --select \
            --dist uniform,bucket-killer --reps 7 2>&1 |
            grep --line-buffered -E "auto|error" | tee -a "$OUT/summary.txt" "$OUT/bracket.txt"
        CLTOPK_SAMPLE_FILTER=profile=1$([ $sf = none ] || echo ,$sf) timeout 60 tools/cltopk bench \
            --device gpu -t f32 -n 2^29 -k 268435456 --algo sample-filter --select --reps 3 2>&1 |
            grep --line-buffered -E "^sample-filter n=" | tail -2 | tee -a "$OUT/summary.txt"
    done
fi

# the radix select's fused passes (fuse), only the groups with elements in a
# histogram launch (act), a small rank as the last of a top-k (seltop); first
# the tests, which run both ways of each
if want medianx; then
    # (grep --line-buffered: a bench cut short by the step's time still leaves
    # its rows in the log)
    log "tests on the GPU: t/radix.t, t/band.t (ofs, range, act, fuse and seltop both ways among their cases)"
    CLTOPK_TEST_DEVICE=gpu timeout 400 make -j"$jobs" check TESTS="t/radix.t t/band.t" \
        >"$OUT/medianx-check.log" 2>&1
    grep -E "^# (TOTAL|PASS|FAIL|ERROR)" "$OUT/medianx-check.log" | tee -a "$OUT/summary.txt"
    for sf in ofs=1 ofs=0; do
        log "bench: selection, 2^29 f32, CLTOPK_SAMPLE_FILTER=$sf"
        CLTOPK_SAMPLE_FILTER=$sf timeout 120 tools/cltopk bench --device gpu -t f32 -n 2^29 \
            -k 1,1024,4097,268435456,402653184,536870912 --algo auto --select \
            --dist uniform,bucket-killer --reps 7 2>&1 |
            grep --line-buffered -E "auto|error" | tee -a "$OUT/summary.txt"
    done
    log "profile: the median (device time a launch)"
    CLTOPK_SAMPLE_FILTER=profile=1 timeout 60 tools/cltopk bench --device gpu -t f32 -n 2^29 \
        -k 268435456 --algo sample-filter --select --reps 3 2>&1 |
        grep --line-buffered -E "^sample-filter n=" | tail -2 | tee -a "$OUT/summary.txt"
    CLTOPK_PROFILE=1 timeout 60 tools/cltopk bench --device gpu -t f32 -n 2^29 -k 268435456 \
        --algo sample-filter --select --reps 1 2>&1 | grep -E "^profile: sf_gather" | tail -1 |
        tee -a "$OUT/summary.txt"
fi

# ---- experiments on the band filter at the median (issue 11)
if want bandx; then
    for spec in dense=1 dense=0,groups=8192 dense=0,groups=16384 dense=0,groups=32768 \
                dense=0,groups=65536 dense=1,groups=16384 dense=1,groups=4096; do
        log "bench: median selection, sample-filter, CLTOPK_SAMPLE_FILTER=$spec"
        CLTOPK_SAMPLE_FILTER=$spec tools/cltopk bench --device gpu -t f32 -n 2^29 \
            -k 268435456 --algo sample-filter --select --dist uniform,increasing --reps 5 2>&1 |
            grep -E "sample-filter|error" | tee -a "$OUT/summary.txt" "$OUT/bandx.txt"
    done
    log "profile: median selection with dense=0,groups=16384 and 65536"
    for g in 16384 65536; do
        CLTOPK_SAMPLE_FILTER=profile=1,dense=0,groups=$g tools/cltopk bench --device gpu -t f32 \
            -n 2^29 -k 268435456 --algo sample-filter --select --reps 1 2>&1 |
            grep -E "sample-filter n=|error" | tail -1 | tee -a "$OUT/summary.txt" "$OUT/bandx.txt"
    done
    log "bench: small bands by one group (small=1000000) against the radix select (small=0)"
    for spec in small=0 small=1000000; do
        CLTOPK_SAMPLE_FILTER=$spec tools/cltopk bench --device gpu -t f32 -n 2^29 -k 1,1024 \
            --algo sample-filter --select --reps 5 2>&1 | grep -E "sample-filter|error" |
            tee -a "$OUT/summary.txt" "$OUT/bandx.txt"
    done
fi

if want pocl; then
    # which kernels this machine's POCL compiles (POCL 5.0 aborted on one)
    log "POCL: each device algorithm on the CPU device (0:0), one process each"
    tools/cltopk gen -t f32 -n 100000 /tmp/pocl.f32
    for a in bitonic sbp-radix sbp-tree radix-select; do
        for k in 1 32 1000; do
            CLTOPK_CACHE=0 timeout 300 tools/cltopk topk --device 0:0 --algo $a -k $k /tmp/pocl.f32 \
                >/dev/null 2>/tmp/pocl.err
            echo "pocl $a k=$k: exit $? $(grep -o "Assertion.*" /tmp/pocl.err | head -c 120)" |
                tee -a "$OUT/summary.txt"
        done
    done
    tools/cltopk unpack --help >/dev/null 2>&1 && {
        for c in for dfor rfor; do
            tools/cltopk pack -c $c /tmp/pocl.f32 /tmp/pocl.$c >/dev/null 2>&1
            CLTOPK_CACHE=0 timeout 300 tools/cltopk unpack --device 0:0 /tmp/pocl.$c /tmp/pocl.out \
                >/dev/null 2>/tmp/pocl.err
            echo "pocl unpack $c: exit $? $(grep -o "Assertion.*" /tmp/pocl.err | head -c 120)" |
                tee -a "$OUT/summary.txt"
        done
    }
fi

if want demo; then
    log "demo"
    tools/cltopk demo 2>&1 | tee -a "$OUT/summary.txt"
fi

if want diag; then
    # what the device compiler made of the reducer: registers, spills, local
    # memory (NVIDIA: -cl-nv-verbose), and the binaries (PTX) from the cache
    log "diag: compiler resource report of the bitonic kernels"
    tools/cltopk gen -t f32 -n 2^22 "$OUT/../diag.f32" 2>/dev/null || tools/cltopk gen -t f32 -n 2^22 /tmp/diag.f32
    df=$( [ -f "$OUT/../diag.f32" ] && echo "$OUT/../diag.f32" || echo /tmp/diag.f32 )
    mkdir -p "$OUT/ptx"
    for k in 1 32 256 1024; do
        for spec in "" "B=8" "B=4" "basic=1"; do
            echo "--- k=$k CLTOPK_BITONIC=$spec" >>"$OUT/ptxas.txt"
            CLTOPK_BITONIC=$spec CLTOPK_BUILD_OPTIONS=-cl-nv-verbose CLTOPK_SHOW_BUILD_LOG=1 \
                CLTOPK_CACHE_DIR="$OUT/ptx" tools/cltopk topk -k $k --algo bitonic --device gpu \
                "$df" >/dev/null 2>>"$OUT/ptxas.txt"
        done
    done
    grep -E "^---|registers|lmem|spill|stack" "$OUT/ptxas.txt" | head -80 | tee -a "$OUT/summary.txt"
fi

ks=1,2,4,8,16,32,64,128,256,512,1024,2048
if want bitonic; then
    log "bench: bitonic, 2^29 f32 uniform, keys + index"
    tools/cltopk bench --device gpu -t f32 -n 2^29 -k $ks --algo bitonic --reps 10 2>&1 |
        tee -a "$OUT/summary.txt"
fi
if want keysonly; then
    for t in f32 u32; do
        log "bench: bitonic, 2^29 $t uniform, keys only"
        tools/cltopk bench --device gpu -t $t -n 2^29 -k $ks --algo bitonic --keys-only \
            --reps 10 2>&1 | tee -a "$OUT/summary.txt"
    done
fi

if want dist; then
    log "bench: distribution independence, 2^29 f32, k = 32, 256, 1024, keys only"
    tools/cltopk bench --device gpu -t f32 -n 2^29 -k 32,256,1024 --algo bitonic --keys-only \
        --dist uniform,increasing,decreasing,bucket-killer --reps 5 2>&1 | tee -a "$OUT/summary.txt"
fi

if want ablation; then
    log "bench: ablation of the optimizations, 2^29 f32, keys only"
    tools/cltopk bench --device gpu --grid ablation --keys-only --reps 5 2>&1 |
        tee -a "$OUT/summary.txt"
fi
if want paper; then
    log "bench: the paper's grid (keys + index)"
    tools/cltopk bench --device gpu --grid paper --reps 5 2>&1 | tee -a "$OUT/summary.txt"
fi

# ---- sbp-tree (split-bucket partition, sampled search tree) -------------------
if want tree; then
log "bench: sbp-tree vs bitonic, 2^29 f32 uniform, keys + index"
tools/cltopk bench --device gpu -t f32 -n 2^29 -k 1,8,32,128,256,1024,2048,4096 \
    --algo sbp-tree,bitonic --reps 10 2>&1 | tee -a "$OUT/summary.txt"
log "bench: sbp-tree distributions, 2^29 f32, k = 8, 128, 1024"
tools/cltopk bench --device gpu -t f32 -n 2^29 -k 8,128,1024 --algo sbp-tree \
    --dist uniform,normal,increasing,decreasing,equal,few,bucket-killer,special --reps 5 2>&1 |
    tee -a "$OUT/summary.txt"
log "bench: sbp-tree types, 2^28, k = 32"
for t in f64 i32 u32 i64 u64; do
    tools/cltopk bench --device gpu -t $t -n 2^28 -k 32 --algo sbp-tree --reps 5 2>&1 |
        tee -a "$OUT/summary.txt"
done
log "bench: sbp-tree ablation (CLTOPK_SBP_TREE), 2^29 f32 uniform and increasing"
for cfg in ${TREE_CFGS:-"CF=0" "CF=1" "CFMAX=64" "SPLIT=15" "SPLIT=31" "SPLIT=15,CF=0" "NS=64" \
           "NS=256" "C=256" "C=512" "PER=32" "WG=128,PER=32" "WG=512,PER=8" "WG=256,PER=8" \
           "TASK=1" "TASK=0"}; do
    echo "CLTOPK_SBP_TREE=$cfg" | tee -a "$OUT/summary.txt"
    CLTOPK_SBP_TREE=$cfg tools/cltopk bench --device gpu -t f32 -n 2^29 -k 8,128,1024 \
        --algo sbp-tree --dist uniform,increasing --reps 5 2>&1 | tee -a "$OUT/summary.txt"
done
fi
# ---- end sbp-tree -------------------------------------------------------------

if ! want torch; then
    :
elif python3 -c 'import torch, numpy; assert torch.cuda.is_available()' 2>/dev/null; then
    # TORCH_ALGOS: the algorithms compared on f32 keys + index (default all)
    for a in ${TORCH_ALGOS:-bitonic sbp-tree auto sbp-radix}; do
        log "vs torch.topk: $a, f32, keys + index"
        python3 "$src/bench/vs_torch.py" --lib .libs/libcltopk.so --n 536870912 --algo $a \
            --k 1,2,4,8,16,32,64,128,256,512,1024,2048,4096 --reps 5 2>&1 |
            tee -a "$OUT/summary.txt"
    done
    if [ -z "${TORCH_ALGOS:-}" ]; then
        log "vs torch.topk: i32, keys only"
        python3 "$src/bench/vs_torch.py" --lib .libs/libcltopk.so --n 536870912 --dtype i32 \
            --keys-only --k 1,32,256,1024,2048 2>&1 | tee -a "$OUT/summary.txt"
    fi
else
    log "torch with CUDA not importable: vs_torch skipped"
fi

if want tune && [ "${GPU_RUN_TUNE:-1}" = 1 ]; then
    for t in f32 u32; do
        log "tune (2^26 $t, keys only)"
        tools/cltopk tune --device gpu -n 2^26 -t $t -k ${TUNE_K:-1,2,4,8,16,32,64,128,256,512,1024,2048} \
            --keys-only --reps 5 2>&1 | tee -a "$OUT/summary.txt"
    done
    log "tune (2^26 f32, keys + index)"
    tools/cltopk tune --device gpu -n 2^26 -k ${TUNE_K:-1,2,4,8,16,32,64,128,256,512,1024,2048} \
        --reps 5 2>&1 | tee -a "$OUT/summary.txt"
fi
# ---------------------------------------------------- bit-packed columns
# decode time of GPU-FOR / GPU-DFOR / GPU-RFOR at widths 1..32 beside the copy
# floor, and top-k (k = 32) of a FOR column (widths <= 16) vs plain int32
if want unpack; then
    log "bench --unpack: 2^28 values, widths 1..32, for/dfor/rfor, top-k k = 32"
    tools/cltopk bench --unpack --device gpu -n 2^28 -c for,dfor,rfor --reps 10 2>&1 |
        tee -a "$OUT/summary.txt" "$OUT/unpack.txt"
    log "bench --unpack: the thesis's 250M values, widths 2..30, for/dfor (JSON in unpack.json)"
    tools/cltopk bench --unpack --device gpu -n 250000000 \
        --widths 2,4,6,8,10,12,14,16,18,20,22,24,26,28,30 -c for,dfor -k 32 --reps 10 --json \
        >"$OUT/unpack.json" 2>&1
    tail -n 40 "$OUT/unpack.json" >>"$OUT/summary.txt"
    log "bench --unpack: the thesis's D1 (sorted, 2^b distinct) and D2 (normal, sigma 20, mean 2^b)"
    tools/cltopk bench --unpack --device gpu -n 250000000 -d sorted --widths 2,8,14,20,24,28 \
        -c for,dfor,rfor -k 0 --reps 5 2>&1 | tee -a "$OUT/summary.txt" "$OUT/unpack.txt"
    tools/cltopk bench --unpack --device gpu -n 250000000 -d normal --widths 6,12,16,20,24,30 \
        -c for,dfor -k 0 --reps 5 2>&1 | tee -a "$OUT/summary.txt" "$OUT/unpack.txt"
    log "bench --unpack: top-k fused with decoding (the reducer loads through LoadBitPack)"
    tools/cltopk bench --unpack --device gpu -n 2^28 -c for \
        --widths 1,4,8,12,16 --reps 10 2>&1 | tee -a "$OUT/summary.txt" "$OUT/unpack.txt"
    log "bench --unpack on the CPU device (OpenMP decoder), 2^26 values"
    tools/cltopk bench --unpack --device cpu -n 2^26 --widths 1,4,8,12,16,20,24,28,32 \
        -c for,dfor,rfor --reps 5 2>&1 | tee -a "$OUT/summary.txt" "$OUT/unpack.txt"
fi
# ---------------------------------- SBP radix, radix select and the AUTO planner
if want sbp; then
    log "planner: constants and predictions (cltopk topk --explain), 2^26 f32 uniform"
    u26=$(mktemp)
    tools/cltopk gen -t f32 -n 2^26 "$u26" 2>/dev/null &&
        tools/cltopk topk --device gpu -k 32 --explain "$u26" 2>&1 | head -12 |
        tee -a "$OUT/summary.txt"
    rm -f "$u26"
    log "bench: the sbp grid (SBP radix, radix select, bitonic, auto; predictions beside)"
    tools/cltopk bench --device gpu --grid sbp --reps 5 2>&1 | tee "$OUT/sbp-grid.txt" |
        tee -a "$OUT/summary.txt"
    log "bench: SBP radix, 11-bit digits (CLTOPK_SBP=digit=11), 2^29 f32"
    CLTOPK_SBP=digit=11 tools/cltopk bench --device gpu -t f32 -n 2^29 -k 1,32,128,1024 \
        --algo sbp-radix --dist uniform,increasing,bucket-killer --reps 5 2>&1 |
        tee -a "$OUT/summary.txt"
    log "bench: SBP radix, tile 256 x 8 (CLTOPK_SBP=ipt=8), 2^29 f32"
    CLTOPK_SBP=ipt=8 tools/cltopk bench --device gpu -t f32 -n 2^29 -k 1,32,128,512 \
        --algo sbp-radix --dist uniform,bucket-killer --reps 5 2>&1 | tee -a "$OUT/summary.txt"
    log "bench: radix select variants (CLTOPK_RADIX), 2^29 f32 and u32 uniform, k = 1024, 2^20"
    for rv in "" "first=11,hc=2" "first=12,hc=1,pre=1" "first=12,hc=1,pre=1,ipt=16" "narrow=0" \
              "hc=8" "ipt=4"; do
        for t in f32 u32; do
            echo "CLTOPK_RADIX=$rv $t" | tee -a "$OUT/summary.txt"
            CLTOPK_RADIX=$rv tools/cltopk bench --device gpu -t $t -n 2^29 -k 1024,2^20 \
                --algo radix-select --reps 5 2>&1 | grep -E "radix-select|error" |
                tee -a "$OUT/summary.txt"
        done
    done
fi
# ---- CPU paths: `cltopk bench --cpu` on this machine's cores, beside
# std::partial_sort, std::nth_element + sort and numpy.argpartition on the same
# arrays (the CPU suites t/cpu_{scalar,avx2,avx512}.t ran in make check above) ----
if want cpu; then
    make bench-peers >>"$OUT/build.log" 2>&1 || log "make bench-peers failed: std:: rows missing"
    log "bench --cpu: $(nproc) cores, 2^25 f32, k = 64, 256, four distributions"
    tools/cltopk bench --cpu -n 2^25 -k 64,256 --reps 5 2>&1 | tee -a "$OUT/summary.txt" \
        "$OUT/bench-cpu.txt"
    for n in 2^26 2^27; do
        log "bench --cpu: $(nproc) cores, $n f32, k = 64, 256"
        tools/cltopk bench --cpu -n "$n" -k 64,256 --reps 5 --dist uniform,increasing 2>&1 |
            tee -a "$OUT/summary.txt" "$OUT/bench-cpu.txt"
    done
    log "bench --cpu: one thread, 2^25 f32, k = 64 (the heap's SIMD filter per core)"
    tools/cltopk bench --cpu -n 2^25 -k 64 --reps 5 --threads 1 --dist uniform 2>&1 |
        tee -a "$OUT/summary.txt" "$OUT/bench-cpu.txt"
    log "bench --cpu: each ISA of the CPU kernels, 2^25 f32 uniform, k = 64"
    for isa in scalar avx2 avx512; do
        CLTOPK_CPU_ISA=$isa tools/cltopk bench --cpu -n 2^25 -k 64 --reps 5 --dist uniform \
            --no-peers 2>&1 | tee -a "$OUT/summary.txt" "$OUT/bench-cpu.txt"
    done
fi
# ---- end of the CPU block ----
# ---- the early-stopping index (issue 15): t/index.t on the GPU, then `cltopk index bench`
# (3 distributions x 2 partitionings, Q0 on m = 2..8, k = 4..256: the index query against
# its full evaluation and the expression top-k), then CLTOPK_PROFILE=1 device times of two
# cells, the rounds read back after each (sync=1) against the default, and the full
# evaluation's two ways (CLTOPK_INDEX=full=old: index_full alone, full=filter: one read
# keeping the tuples above a bound, the default) on anti-correlated data, the switched
# cells, in one run, then the switch rule's ratio 0.2 against 0.5.  About 9 minutes.
# INDEX_TUPLES (default 2^26), INDEX_REPS (3), INDEX_ARGS (more options for the bench,
# e.g. "-k 4,256 --partitioning angle"), INDEX_CHECK=0 skips the test, INDEX_SYNC=0 the
# sync comparison, INDEX_FULL=0 the full evaluation's and the ratio's, INDEX_PROFILE=0
# the profile; CLTOPK_INDEX passes through to the bench and the profile (e.g.
# grow=1,probe=16). ----
if want index; then
    if [ "${INDEX_CHECK:-1}" = 1 ]; then
        log "t/index.t on the GPU"
        CLTOPK_TEST_DEVICE=gpu timeout 200 make -j"$jobs" check TESTS=t/index.t \
            >"$OUT/index-check.log" 2>&1
        irc=$?
        grep -E "^# (PASS|FAIL|ERROR)" "$OUT/index-check.log" | tee -a "$OUT/summary.txt"
        grep -E "^(not ok|Bail)" t/index.log 2>/dev/null | head -20 | tee -a "$OUT/summary.txt"
        log "t/index.t exit $irc"
        [ $irc -eq 0 ] || rc=$irc
    fi
    log "index bench: ${INDEX_TUPLES:-2^26} tuples x 8, three distributions, both partitionings${CLTOPK_INDEX:+ (CLTOPK_INDEX=$CLTOPK_INDEX)}"
    timeout 400 tools/cltopk index bench --device gpu --tuples "${INDEX_TUPLES:-2^26}" \
        --reps "${INDEX_REPS:-3}" ${INDEX_ARGS:-} 2>&1 | tee -a "$OUT/summary.txt" "$OUT/index.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || { log "index bench failed"; rc=1; }
    if [ "${INDEX_SYNC:-1}" = 1 ]; then
        # the rounds' progress read back after each round (CLTOPK_INDEX=sync=1) against the
        # default (every round enqueued at once): which is cheaper on this GPU
        for sy in 0 1; do
            log "index bench, CLTOPK_INDEX=sync=$sy: angle partitions, m = 2, 8, k = 4, 256"
            CLTOPK_INDEX=sync=$sy timeout 120 tools/cltopk index bench --device gpu \
                --tuples "${INDEX_TUPLES:-2^26}" --dist correlated,anticorrelated \
                --partitioning angle -m 2,8 -k 4,256 --reps "${INDEX_REPS:-3}" --no-query 2>&1 |
                tee -a "$OUT/summary.txt" "$OUT/index.txt"
        done
    fi
    if [ "${INDEX_FULL:-1}" = 1 ]; then
        # old and new full evaluation, alternated twice: `full ms` is cltopk_index_full_topk,
        # `index ms` of the switched cells the rounds and then that evaluation of the rest
        for fw in old filter old filter; do
            log "index bench, CLTOPK_INDEX=full=$fw: anticorrelated, both partitionings"
            CLTOPK_INDEX="${CLTOPK_INDEX:+$CLTOPK_INDEX,}full=$fw" timeout 150 \
                tools/cltopk index bench --device gpu --tuples "${INDEX_TUPLES:-2^26}" \
                --dist anticorrelated --reps "${INDEX_REPS:-3}" --no-query ${INDEX_ARGS:-} 2>&1 |
                tee -a "$OUT/summary.txt" "$OUT/index.txt"
        done
        # the switch rule's ratio (the cost of a full-evaluation block over an index block;
        # 0.5 on GPUs was guessed for index_full): 0.2 against the default with the filter,
        # on the data that switches or nearly does
        for ra in 0.5 0.2; do
            log "index bench, CLTOPK_INDEX=ratio=$ra: independent, anticorrelated, m = 4, 8"
            CLTOPK_INDEX="${CLTOPK_INDEX:+$CLTOPK_INDEX,}ratio=$ra" timeout 150 \
                tools/cltopk index bench --device gpu --tuples "${INDEX_TUPLES:-2^26}" \
                --dist independent,anticorrelated -m 4,8 -k 4,256 --reps "${INDEX_REPS:-3}" \
                --no-query 2>&1 | tee -a "$OUT/summary.txt" "$OUT/index.txt"
        done
    fi
    if [ "${INDEX_PROFILE:-1}" = 1 ]; then
        for dist in correlated anticorrelated; do
            log "index profile: $dist, random partitions, m = 4, k = 4 and 256 (one run each)"
            CLTOPK_PROFILE=1 timeout 120 tools/cltopk index bench --device gpu \
                --tuples "${INDEX_TUPLES:-2^26}" --dist $dist --partitioning random -m 4 \
                -k 4,256 --reps 1 --no-query >"$OUT/index-profile-$dist.txt" 2>&1
            grep -E "^ *4 " "$OUT/index-profile-$dist.txt" | tee -a "$OUT/summary.txt"
        done
    fi
fi
# ---- host data larger than a chunk, streamed (issue 17, part 3): 2^32 f32 (16 GiB)
# in pinned host memory; the host-to-device bandwidth from that memory measured
# first, then CLTOPK_STREAM=0 (the chunk loop: each chunk waits for its transfer),
# 1 (pieces through pinned staging, transfers beside reductions) and direct (the
# pieces written from the caller's pinned memory), every answer checked against
# mode 0's.  STREAM_N sets n (default 2^32).  About a minute. ----
if want stream; then
    log "bench --stream: ${STREAM_N:-2^32} f32 from pinned host memory, radix-select, k = 1000, 2^20"
    timeout 150 tools/cltopk bench --stream --device gpu -n "${STREAM_N:-2^32}" -k 1000,2^20 \
        --reps 3 2>&1 | tee -a "$OUT/summary.txt" "$OUT/stream.txt"
    log "bench --stream: 2^30 f32 from pageable (malloc'd) host memory, k = 1000"
    timeout 60 tools/cltopk bench --stream --device gpu -n 2^30 -k 1000 --pageable --reps 3 2>&1 |
        tee -a "$OUT/summary.txt" "$OUT/stream.txt"
fi
# ---- end of the stream block ----
# ---- several devices of one host (issue 17, part 2): the GPU and POCL's CPU
# device in one context (MULTI_DEVICES, default "gpu,Portable"): the split that
# cltopk devices --split shows (the model's, then the measured speeds' after 3
# calls), t/multi.t against the oracle and the GPU alone
# (run directly: make check would build every test first), and the time of
# 2^28 f32 (pinned) on both against the GPU alone (median of 3: the first call
# splits by the model, the later ones by the measured speeds).  About two
# minutes. ----
if want multi; then
    md=${MULTI_DEVICES:-gpu,Portable}
    log "several devices: the split of '$md' (cltopk devices --split)"
    tools/cltopk devices --split "$md" 2>&1 | sed -n '/^split of/,$p' | tee -a "$OUT/summary.txt" "$OUT/multi.txt"
    log "several devices: the split of '$md' after 3 calls (by the measured speeds)"
    tools/cltopk devices --split "$md" --measure 3 2>&1 | sed -n '/^split of/,$p' | tee -a "$OUT/summary.txt" "$OUT/multi.txt"
    log "several devices: t/multi.t on '$md' (CLTOPK_TEST_MULTI)"
    make t/multi.t >>"$OUT/build.log" 2>&1
    CLTOPK_TEST_MULTI="$md" timeout 150 t/multi.t >"$OUT/check-multi.log" 2>&1
    mrc=$?
    grep -E "^(not ok|Bail|1\.\.)|^# devices" "$OUT/check-multi.log" | tail -20 |
        tee -a "$OUT/summary.txt" "$OUT/multi.txt"
    log "t/multi.t exit $mrc"
    [ $mrc -eq 0 ] || rc=$mrc
    # named device algorithms: AUTO keeps host data on the host CPU here
    for a in radix-select sample-filter; do
        for d in "$md" gpu; do
            log "several devices: 2^28 f32 pinned, $a, k = 1000 on '$d'"
            timeout 60 tools/cltopk bench --stream --device "$d" -n 2^28 -k 1000 --modes 1 \
                --reps 3 --algo $a 2>&1 | tee -a "$OUT/summary.txt" "$OUT/multi.txt"
        done
    done
fi
# ---- end of the multi block ----
# ---- the Python package on a pyopencl array (issue 16): cltopk.topk on 2^29
# float32 in a pyopencl array against cltopk_topk_buffer on the same cl_mem,
# context and queue (bench/py_vs_c.py).  With no network: the wheels that
# bench/py-wheels.sh downloads for this python3's version in PYOCL_WHEELS
# (default .gpu/wheels), and, where this python3 has no headers (no
# python3-dev), libpythonX.Y-dev's .deb in PYOCL_DEBS (default .gpu/py-debs),
# unpacked with dpkg -x.  A venv over the system's packages (numpy), pip from
# its wheel, the package built against this build.  PYOCL_N (default 2^29),
# PYOCL_K (32,1024), PYOCL_REPS (21), PYOCL_DEVICE (NVIDIA: part of the
# device's or platform's name).  About a minute. ----
if want pyocl; then
    pyv=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    wh=${PYOCL_WHEELS:-$src/.gpu/wheels}
    log "pyocl: $(python3 --version 2>&1), wheels from $wh"
    if ! ls "$wh"/pyopencl-*-cp${pyv/./}-*.whl >/dev/null 2>&1 || ! ls "$wh"/pip-*.whl >/dev/null 2>&1; then
        log "pyocl: no pyopencl wheel for Python $pyv (or no pip wheel) in $wh (it has: $(ls "$wh" 2>/dev/null |
            grep -o -- '-cp3[0-9]*-' | sort -u | tr -d - | tr '\n' ' ')): run bench/py-wheels.sh DIR $pyv where there is a network"
        rc=1
    else
        pyd=$(mktemp -d)
        python3 -m venv --without-pip --system-site-packages "$pyd/venv"
        pip="$pyd/venv/bin/python $(ls "$wh"/pip-*.whl | head -n1)/pip"
        $pip install -q --no-index --find-links "$wh" pyopencl cffi setuptools wheel >"$OUT/pyocl.log" 2>&1
        if ! "$pyd/venv/bin/python" -c 'import pyopencl, cffi' >>"$OUT/pyocl.log" 2>&1; then
            # a system numpy that pyopencl's wheel cannot use: the wheel's numpy in the venv
            log "pyocl: pyopencl does not import over the system's numpy $(python3 -c 'import numpy; print(numpy.__version__)' 2>&1): numpy from $wh"
            $pip install -q --no-index --find-links "$wh" --ignore-installed numpy >>"$OUT/pyocl.log" 2>&1
        fi
        pyinc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
        pycflags=
        if [ ! -f "$pyinc/Python.h" ]; then
            deb=$(ls "${PYOCL_DEBS:-$src/.gpu/py-debs}"/libpython$pyv-dev_*.deb 2>/dev/null | head -n1)
            log "pyocl: no $pyinc/Python.h: the headers of ${deb:-(no libpython$pyv-dev .deb found)}"
            [ -n "$deb" ] && dpkg -x "$deb" "$pyd/hdr" &&
                pycflags="-I$pyd/hdr/usr/include/python$pyv -I$pyd/hdr/usr/include/x86_64-linux-gnu/python$pyv -I$pyd/hdr/usr/include"
        fi
        CFLAGS="$pycflags" CLTOPK_BUILD_DIR=$PWD CLTOPK_SOURCE_DIR=$PWD \
            $pip install -q --no-index --no-build-isolation --no-deps ./python >>"$OUT/pyocl.log" 2>&1
        if (cd "$pyd" && venv/bin/python -c 'import cltopk, pyopencl') >>"$OUT/pyocl.log" 2>&1; then
            log "pyocl: cltopk.topk on a pyopencl array vs cltopk_topk_buffer, ${PYOCL_N:-2^29} f32"
            (cd "$pyd" && venv/bin/python "$src/bench/py_vs_c.py" --n "${PYOCL_N:-2^29}" \
                --k "${PYOCL_K:-32,1024}" --reps "${PYOCL_REPS:-21}" --device "${PYOCL_DEVICE:-NVIDIA}") 2>&1 |
                tee -a "$OUT/summary.txt" "$OUT/pyocl.txt"
            [ "${PIPESTATUS[0]}" -eq 0 ] || { log "pyocl: py_vs_c.py failed"; rc=1; }
        else
            log "pyocl: the venv's cltopk or pyopencl does not import (see pyocl.log)"
            tail -20 "$OUT/pyocl.log" | tee -a "$OUT/summary.txt"
            rc=1
        fi
    fi
fi
# ---- end of the pyocl block ----
# ---- MPI at P up to 16 (issue 17): Open MPI from Ubuntu 24.04's .debs in
# MPI_DEBS (default .gpu/mpi-debs: openmpi-bin, libopenmpi3t64,
# libopenmpi-dev, openmpi-common and the runtime libraries they load),
# unpacked with dpkg -x into a prefix (nothing installed; OPAL_PREFIX,
# OPAL_SYSCONFDIR and PMIX_PREFIX point Open MPI and PMIx there), the tarball
# configured --with-mpi beside the main build, then `cltopk-mpi topk --bench`
# as in bench/RESULTS.md's "MPI (issue 17)" on MPI_N (default 2^30) float32
# uniform values in one file, each rank reading its slice, one thread a rank:
# P in MPI_PS (1 2 4 8 16) on each device of MPI_DEVICES (cpu Portable: the
# OpenMP device and POCL's, POCL on one compute unit a rank), and on the GPU
# at P in MPI_GPU_PS (1 2; empty: none); k in MPI_K (1000 4096); the local
# top-k's algorithm MPI_ALGO (auto: on host data the planner may keep a CPU
# device's work on the host's cpu-heap); the best of MPI_REPS (5) runs.
# Every answer is compared with the first run's for its k (the first device
# at P = 1).  The table is mpi.txt.  Some minutes at 2^30. ----
if want mpi; then
    # in a subshell: the environment of Open MPI stays in it
    (
    mfail=0
    mdebs=${MPI_DEBS:-$src/.gpu/mpi-debs}
    mp=$(mktemp -d)
    trap 'rm -rf "$mp"' EXIT
    # unpack Open MPI and set its environment (bench/mpi-env.sh)
    . "$src/bench/mpi-env.sh"
    mpi_env "$mdebs" "$mp" || exit 1
    log "mpi: $(mpirun --version 2>&1 | head -n1) from $(ls "$mdebs" | wc -l) .debs in $mdebs"
    mkdir -p "$mp/build"
    tar xzf "$tarball" -C "$mp/build"
    mb=$(ls -d "$mp"/build/cltopk-*)
    if ! (cd "$mb" && ./configure --with-mpi MPI_CFLAGS="-I$mlib/openmpi/include" \
            MPI_LIBS="-L$mlib/openmpi/lib -lmpi -Wl,-rpath-link,$mlib" &&
          make -j"$jobs") >"$OUT/build-mpi.log" 2>&1; then
        log "mpi: the build with MPI failed (build-mpi.log)"
        grep -E "MPI|error" "$OUT/build-mpi.log" | tail -20 | tee -a "$OUT/summary.txt"
        exit 1
    fi
    data=$mp/data.f32
    "$mb/tools/cltopk" gen -t f32 -n "${MPI_N:-2^30}" -d uniform "$data" >/dev/null 2>&1 ||
        { log "mpi: cltopk gen -n ${MPI_N:-2^30} failed"; exit 1; }
    {
        echo "MPI_N=${MPI_N:-2^30} float32 uniform, one thread a rank, --algo ${MPI_ALGO:-auto}, best of ${MPI_REPS:-5}; ms, the slowest rank's"
        echo
        echo "| device | P | k | local top-k | whole call | call - local | whole / local | call on k a rank | allreduce 8 B | reduce of k records | answer |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|"
    } | tee -a "$OUT/summary.txt" "$OUT/mpi.txt"
    for dev in ${MPI_DEVICES:-cpu Portable} gpu; do
        if [ "$dev" = gpu ]; then ps=${MPI_GPU_PS-1 2}; else ps=${MPI_PS:-1 2 4 8 16}; fi
        for k in ${MPI_K:-1000 4096}; do
            for np in $ps; do
                # POCL on one compute unit a rank, as the CPU device on one thread
                POCL_CPU_MAX_CU_COUNT=1 POCL_MAX_PTHREAD_COUNT=1 OMP_NUM_THREADS=1 \
                    timeout 300 mpirun --oversubscribe -np "$np" "$mb/tools/cltopk-mpi" topk \
                    -k "$k" --device "$dev" --algo "${MPI_ALGO:-auto}" --bench "${MPI_REPS:-5}" \
                    "$data" >"$mp/out" 2>"$mp/err"
                mrc=$?
                [ -s "$mp/err" ] && cp "$mp/err" "$OUT/mpi-$dev-$np-$k.err"
                line=$(grep '^bench ' "$mp/out" | tail -n1)
                if [ $mrc -ne 0 ] || [ -z "$line" ]; then
                    echo "| $dev | $np | $k | failed (exit $mrc: $(grep -v '^$' "$mp/err" | tail -n1 | cut -c1-120)) |" |
                        tee -a "$OUT/summary.txt" "$OUT/mpi.txt"
                    mfail=1
                    continue
                fi
                # the answer's rows (rank, position, value) against the first run's for this k
                grep -E '^ *[0-9]+ +[0-9]+ +' "$mp/out" >"$mp/answer"
                [ -f "$mp/ref-$k" ] || cp "$mp/answer" "$mp/ref-$k"
                if [ "$(wc -l <"$mp/answer")" -eq "$k" ] && cmp -s "$mp/answer" "$mp/ref-$k"; then
                    same=same
                else
                    same=DIFFERS
                    mfail=1
                fi
                echo "$line" | awk -v dev="$dev" -v np="$np" -v k="$k" -v same="$same" '{
                    for (i = 1; i <= NF; i++) {
                        if ($i == "top-k" && $(i - 1) == "local") loc = $(i + 1)
                        if ($i == "call" && $(i - 1) == "whole") whole = $(i + 1)
                        if ($i == "rank") onk = $(i + 1)
                        if ($i ~ /^allreduce\(/) ar = $(i + 2)
                        if ($i ~ /^reduce\(/) red = $(i + 2)
                    }
                    ratio = 0
                    if (loc > 0)
                        ratio = whole / loc
                    printf("| %s | %s | %s | %.3f | %.3f | %.3f | %.2f | %.3f | %.3f | %.3f | %s |\n",
                           dev, np, k, loc * 1e3, whole * 1e3, (whole - loc) * 1e3, ratio,
                           onk * 1e3, ar * 1e3, red * 1e3, same)
                }' | tee -a "$OUT/summary.txt" "$OUT/mpi.txt"
            done
        done
    done
    exit $mfail
    ) || rc=1
fi
# ---- end of the mpi block ----
# ---- several GPUs of one host (issue 18): bench/multi-gpu.sh in this build on
# every GPU (MGPU_DEVICES: a comma list instead), P = 1, 2, 4 as the machine
# has them: host data of 2^32 float32 split by one context (mgpu-host.txt),
# 2^30 float32 resident on each GPU with the host merge (mgpu-resident.txt),
# MPI a rank a GPU against one process (mgpu-mpi.txt; Open MPI from MPI_DEBS
# as the mpi step, built from this tarball).  MGPU_* as the script's header
# says.  Some minutes on 4 GPUs. ----
if want multigpu; then
    log "several GPUs: bench/multi-gpu.sh (host data split, resident data merged, MPI a rank a GPU)"
    OUT=$OUT MGPU_TARBALL=$tarball MGPU_MPI_DEBS=${MPI_DEBS:-$src/.gpu/mpi-debs} \
        "$src/bench/multi-gpu.sh" "$PWD" 2>&1 | tee -a "$OUT/summary.txt" "$OUT/multigpu.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
fi
# ---- end of the multigpu block ----
exit $rc
