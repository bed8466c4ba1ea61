#!/bin/bash
# gpu-run.sh - build, test and benchmark cltopk on a machine with an NVIDIA GPU,
# from a release tarball (that machine may lack libtool: build the tarball with
# `make dist` elsewhere and put it in .gpu/).  Logs and tables go to $OUT.
#
#   bench/gpu-run.sh [TARBALL]       (default: the newest .gpu/cltopk-*.tar.gz)
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

log "make check (OpenCL tests on the GPU: CLTOPK_TEST_DEVICE=gpu)"
CLTOPK_TEST_DEVICE=gpu make -j"$jobs" check >"$OUT/check.log" 2>&1
rc=$?
grep -E "^(# |PASS|FAIL|ERROR|SKIP|XFAIL)" "$OUT/check.log" | tail -25 | tee -a "$OUT/summary.txt"
for f in t/*.log; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done >"$OUT/test-logs.txt" 2>/dev/null
log "make check exit $rc"

log "demo"
tools/cltopk demo 2>&1 | tee -a "$OUT/summary.txt"

log "bench: bitonic, 2^29 f32 uniform, keys + index"
tools/cltopk bench --device gpu -t f32 -n 2^29 -k 1,2,4,8,16,32,64,128,256,512,1024,2048 \
    --algo bitonic --reps 10 2>&1 | tee -a "$OUT/summary.txt"

log "bench: distribution independence, 2^29 f32, k = 32, 256"
tools/cltopk bench --device gpu -t f32 -n 2^29 -k 32,256 --algo bitonic \
    --dist uniform,increasing,decreasing,bucket-killer --reps 5 2>&1 | tee -a "$OUT/summary.txt"

if tools/cltopk bench --help 2>&1 | grep -q -- --grid; then
    log "bench: ablation of the optimizations, 2^29 f32"
    tools/cltopk bench --device gpu --grid ablation --reps 5 2>&1 | tee -a "$OUT/summary.txt"
    log "bench: the paper's grid"
    tools/cltopk bench --device gpu --grid paper --reps 5 2>&1 | tee -a "$OUT/summary.txt"
fi

if python3 -c 'import torch, numpy; assert torch.cuda.is_available()' 2>/dev/null; then
    log "vs torch.topk: f32, keys + index"
    python3 "$src/bench/vs_torch.py" --lib .libs/libcltopk.so --n 536870912 \
        --k 1,2,4,8,16,32,64,128,256,512,1024,2048 2>&1 | tee -a "$OUT/summary.txt"
    log "vs torch.topk: i32, keys only"
    python3 "$src/bench/vs_torch.py" --lib .libs/libcltopk.so --n 536870912 --dtype i32 \
        --keys-only --k 1,32,256,1024,2048 2>&1 | tee -a "$OUT/summary.txt"
    log "vs torch.topk: foundation kernel (CLTOPK_BITONIC=basic=1), f32"
    CLTOPK_BITONIC=basic=1 python3 "$src/bench/vs_torch.py" --lib .libs/libcltopk.so \
        --n 536870912 --k 1,32,256,1024 --reps 5 2>&1 | tee -a "$OUT/summary.txt"
else
    log "torch with CUDA not importable: vs_torch skipped"
fi

if [ "${GPU_RUN_TUNE:-1}" = 1 ] && tools/cltopk help tune >/dev/null 2>&1; then
    log "tune (2^26 f32)"
    tools/cltopk tune --device gpu -n 2^26 -k 1,32,256,1024,2048 --reps 5 2>&1 |
        tee -a "$OUT/summary.txt"
fi
# ---------------------------------------------------- bit-packed columns
# decode time of GPU-FOR / GPU-DFOR / GPU-RFOR at widths 1..32 beside the copy
# floor, and top-k (k = 32) of a FOR column (widths <= 16) vs plain int32
if tools/cltopk bench --unpack --help >/dev/null 2>&1; then
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
    log "bench --unpack: top-k fused with decoding (the reducer at WG=128 loads through LoadBitPack)"
    CLTOPK_BITONIC=WG=128 tools/cltopk bench --unpack --device gpu -n 2^28 -c for \
        --widths 1,4,8,12,16 --reps 10 2>&1 | tee -a "$OUT/summary.txt" "$OUT/unpack.txt"
    log "bench --unpack on the CPU device (OpenMP decoder), 2^26 values"
    tools/cltopk bench --unpack --device cpu -n 2^26 --widths 1,4,8,12,16,20,24,28,32 \
        -c for,dfor,rfor --reps 5 2>&1 | tee -a "$OUT/summary.txt" "$OUT/unpack.txt"
fi
exit $rc
