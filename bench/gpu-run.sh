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

# ---- sbp-tree (split-bucket partition, sampled search tree) -------------------
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
for cfg in "CF=0" "CF=1" "CFMAX=64" "SPLIT=15" "SPLIT=31" "SPLIT=15,CF=0" "NS=64" "NS=256" \
           "C=256" "C=512" "PER=32" "WG=128,PER=32" "WG=512,PER=8" "WG=256,PER=8" "TASK=1" "TASK=0"; do
    echo "CLTOPK_SBP_TREE=$cfg" | tee -a "$OUT/summary.txt"
    CLTOPK_SBP_TREE=$cfg tools/cltopk bench --device gpu -t f32 -n 2^29 -k 8,128,1024 \
        --algo sbp-tree --dist uniform,increasing --reps 5 2>&1 | tee -a "$OUT/summary.txt"
done
# ---- end sbp-tree -------------------------------------------------------------

if python3 -c 'import torch, numpy; assert torch.cuda.is_available()' 2>/dev/null; then
    log "vs torch.topk: f32, keys + index"
    python3 "$src/bench/vs_torch.py" --lib .libs/libcltopk.so --n 536870912 \
        --k 1,2,4,8,16,32,64,128,256,512,1024,2048 2>&1 | tee -a "$OUT/summary.txt"
    # ---- sbp-tree
    log "vs torch.topk: sbp-tree, f32"
    python3 "$src/bench/vs_torch.py" --lib .libs/libcltopk.so --algo sbp-tree --n 536870912 \
        --k 1,8,32,128,1024,2048,4096 2>&1 | tee -a "$OUT/summary.txt"
    # ---- end sbp-tree
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
exit $rc
