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
# benchmark next to the read floor, and bench/vs_torch.py (torch.topk on the same
# data in the same process) when torch is importable.
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

log "bench: bitonic, 2^29 f32 uniform"
tools/cltopk bench --device gpu -t f32 -n 2^29 -k 1,32,256,1024 --algo bitonic --reps 10 2>&1 |
    tee -a "$OUT/summary.txt"

if python3 -c 'import torch, numpy; assert torch.cuda.is_available()' 2>/dev/null; then
    log "vs torch.topk"
    python3 "$src/bench/vs_torch.py" --lib .libs/libcltopk.so --n 536870912 --k 1,32,256,1024 \
        2>&1 | tee -a "$OUT/summary.txt"
else
    log "torch with CUDA not importable: vs_torch skipped"
fi
exit $rc
