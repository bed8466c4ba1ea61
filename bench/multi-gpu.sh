#!/bin/bash
# multi-gpu.sh - top-k on several GPUs of one host (issue 18): 1, 2 and 4 GPUs
# (as many as the machine has), three tables in $OUT.  Run from a built tree
# (bench/gpu-run.sh's step multigpu runs it in its build):
#
#   bench/multi-gpu.sh [BUILD]     (default: the current directory if it has
#                                   tools/cltopk, else this source tree)
#
# 1. host data (mgpu-host.txt): MGPU_N (2^32) float32 on the host, k in MGPU_K
#    (32,1024), split by cltopk_topk across a context of the first P GPUs
#    (cltopk_open with the comma list): `cltopk bench --stream --modes 1` from
#    pinned memory (a mapped buffer of the first device's context), and
#    bench/multi_resident --host from malloc'd memory with the answer checked
#    exactly.  Speed-up against P = 1 and its share of linear (goal >= 0.9).
#    The pinned memory is pinned by the first device's context; how the other
#    devices' transfers from it run is the driver's (compare the two columns).
# 2. device-resident data (mgpu-resident.txt): MGPU_RES_N (2^30) float32 on
#    each GPU, k in MGPU_RES_K (32,1024,65536).  The library has no call that
#    takes one cl_mem a device (a context of several devices splits host data
#    only; its cl_mem calls run on its first device), so this measures the
#    closest thing on the public API, bench/multi_resident.c: a context and a
#    buffer a GPU, cltopk_topk_buffer on each in a thread a GPU, each GPU's k
#    results read back, and the exact host merge of the P lists; the merge's
#    share of the whole (goal < 5%), the answer checked exactly.
# 3. MPI, one rank a GPU (mgpu-mpi.txt): the MGPU_N values in one file (cltopk
#    gen), `mpirun -np P cltopk-mpi topk --bench` with rank r's context on the
#    r-th device of the list (from OMPI_COMM_WORLD_LOCAL_RANK), against
#    `mpirun -np 1` with one context of the same P devices (the single-process
#    figure, same data, same measurement); goal: the ranks within 1.1x.  Uses
#    BUILD's tools/cltopk-mpi where mpirun is on PATH; else Open MPI from the
#    .debs in MGPU_MPI_DEBS (default .gpu/mpi-debs, as gpu-run.sh's mpi step:
#    bench/mpi-env.sh) and a build --with-mpi of MGPU_TARBALL (default the
#    newest .gpu/cltopk-*.tar.gz).
#
# Environment:
#   MGPU_DEVICES  comma list of device specs, one a GPU, as cltopk_open takes
#                 them (default: every GPU of `cltopk devices`, as P:D).  On a
#                 CPU-only machine, a dry run on POCL:
#                   POCL_DEVICES="pthread pthread pthread pthread" \
#                   MGPU_DEVICES=0:0,0:1,0:2,0:3 MGPU_N=2^20 MGPU_RES_N=2^20 \
#                   bench/multi-gpu.sh
#   MGPU_PS       the device counts (default "1 2 4"; those above the devices'
#                 number are reported as not measured)
#   MGPU_N, MGPU_K, MGPU_RES_N, MGPU_RES_K   sizes, as above
#   MGPU_ALGO     the algorithm of parts 1 and 3 (default radix-select: AUTO may
#                 keep host data on the host CPU); MGPU_RES_ALGO of part 2 (auto)
#   MGPU_REPS     timed runs a row (default 5; the median, MPI: the best)
#   MGPU_CHECK    full (default), sample or none: multi_resident's check
#   MGPU_STEPS    the parts (default "host resident mpi")
#   MGPU_TMP      where the MPI part's data file goes (default a mktemp -d)
# Exit status 1 when a row failed or an answer was wrong.
set -u -o pipefail
OUT=${OUT:-$PWD/mgpu-out}
mkdir -p "$OUT"
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-}
if [ -z "$build" ]; then
    if [ -x tools/cltopk ]; then build=$PWD; else build=$src; fi
fi
build=$(cd "$build" && pwd)
cltopk=$build/tools/cltopk
[ -x "$cltopk" ] || { echo "multi-gpu: no $cltopk (build first)" >&2; exit 1; }
N=${MGPU_N:-2^32}
RN=${MGPU_RES_N:-2^30}
K=${MGPU_K:-32,1024}
RK=${MGPU_RES_K:-32,1024,65536}
ALGO=${MGPU_ALGO:-radix-select}
RALGO=${MGPU_RES_ALGO:-auto}
REPS=${MGPU_REPS:-5}
CHECK=${MGPU_CHECK:-full}
steps=" ${MGPU_STEPS:-host resident mpi} "
want() { case "$steps" in *" $1 "*) return 0 ;; esac; return 1; }
log() { echo "== $*"; }
rc=0

# NVIDIA's OpenCL driver is often installed without an ICD file: register it as
# gpu-run.sh does (which exports OCL_ICD_VENDORS already when it runs this)
if [ -z "${OCL_ICD_VENDORS:-}" ] && ! grep -qs libnvidia-opencl /etc/OpenCL/vendors/*.icd &&
    ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1; then
    icd=$(mktemp -d)
    echo libnvidia-opencl.so.1 >"$icd/nvidia.icd"
    cp /etc/OpenCL/vendors/*.icd "$icd/" 2>/dev/null
    export OCL_ICD_VENDORS=$icd
fi

# ---- the devices: MGPU_DEVICES, else every GPU
if [ -n "${MGPU_DEVICES:-}" ]; then
    devices=$MGPU_DEVICES
else
    devices=$("$cltopk" devices --json 2>/dev/null | grep '"type": "GPU"' |
        sed 's/.*"spec": "\([^"]*\)".*/\1/' | paste -sd, -)
fi
if [ -z "$devices" ]; then
    log "multi-gpu: no GPU in \`cltopk devices\` (MGPU_DEVICES names devices by hand)"
    "$cltopk" devices 2>&1 | sed 's/^/    /'
    exit 1
fi
IFS=, read -r -a devlist <<<"$devices"
ndev=${#devlist[@]}
# the first $1 devices of the list, comma-separated
first() { local IFS=,; echo "${devlist[*]:0:$1}"; }
ps= missing=
for p in ${MGPU_PS:-1 2 4}; do
    if [ "$p" -le "$ndev" ]; then
        ps="$ps $p"
    else
        missing="${missing:+$missing; }P = $p needs $p devices, this machine has $ndev: not measured"
    fi
done
[ -z "$missing" ] || log "$missing"
log "devices: $devices; P in$ps; host n = $N, k = $K; resident n = $RN a device, k = $RK"
for ((d = 0; d < ndev; d++)); do
    echo "   ${devlist[$d]}: $("$cltopk" devices --json 2>/dev/null | grep "\"spec\": \"${devlist[$d]}\"" |
        sed 's/.*"platform": "\([^"]*\)", "name": "\([^"]*\)".*/\1 \/ \2/')"
done

# ---- bench/multi_resident.c, built against BUILD's library (beside, not in $OUT)
mrdir=$(mktemp -d)
trap 'rm -rf "$mrdir"' EXIT
mr=$mrdir/multi_resident
if want host || want resident; then
    if ! ${CC:-cc} -std=gnu11 -O2 -fopenmp -DCL_TARGET_OPENCL_VERSION=120 -I"$build/include" \
        -I"$src/include" "$src/bench/multi_resident.c" -o "$mr" -L"$build/.libs" -lcltopk \
        -lOpenCL -lpthread -Wl,-rpath,"$build/.libs" >"$OUT/multi_resident.build.log" 2>&1; then
        log "multi-gpu: bench/multi_resident.c does not build (multi_resident.build.log)"
        tail -20 "$OUT/multi_resident.build.log"
        exit 1
    fi
fi

# ---- 1. host data split across P devices
if want host; then
    declare -A tpin tpag ans
    for p in $ps; do
        log "host data: $N float32, k = $K, --algo $ALGO on P = $p: $(first "$p")"
        # pinned: bench --stream, CLTOPK_STREAM=1 (transfers beside reductions)
        timeout 300 "$cltopk" bench --stream --device "$(first "$p")" -n "$N" -k "$K" --modes 1 \
            --algo "$ALGO" --reps "$REPS" >"$OUT/mgpu-host-pinned-$p.log" 2>&1 || rc=1
        sed 's/^/    /' "$OUT/mgpu-host-pinned-$p.log"
        while read -r k mode med _; do
            [ "$mode" = 1 ] && [[ $k =~ ^[0-9]+$ ]] && [[ $med =~ ^[0-9.]+$ ]] && tpin[$p,$k]=$med
        done <"$OUT/mgpu-host-pinned-$p.log"
        # pageable, the answer checked: multi_resident --host
        timeout 300 "$mr" --host --devices "$(first "$p")" -n "$N" -k "$K" --algo "$ALGO" \
            --reps "$REPS" --check "$CHECK" >"$OUT/mgpu-host-pageable-$p.log" 2>&1 || rc=1
        sed 's/^/    /' "$OUT/mgpu-host-pageable-$p.log"
        while IFS='|' read -r _ P n k med gbs answer _; do
            k=${k// /} med=${med// /}
            [[ $k =~ ^[0-9]+$ ]] && [[ $med =~ ^[0-9.]+$ ]] || continue
            tpag[$p,$k]=$(awk -v m="$med" 'BEGIN { printf("%.6f", m / 1e3) }')
            ans[$p,$k]=$(echo $answer)
        done <"$OUT/mgpu-host-pageable-$p.log"
    done
    {
        echo "Host data: $N float32 (uniform in [0, 1), 2^24 levels), split by cltopk_topk across a"
        echo "context of P devices, --algo $ALGO; median of $REPS calls, ms.  Speed-up against P = 1,"
        echo "and its share of linear (speed-up / P; goal >= 0.9)."
        echo
        echo "| P | k | pinned (bench --stream) | speed-up | of linear | pageable | speed-up | of linear | answer (pageable) |"
        echo "|---|---|---|---|---|---|---|---|---|"
        for p in $ps; do
            for k in ${K//,/ }; do
                # 2^10 as the tools print it
                k=$(awk -v k="$k" 'BEGIN { if (k ~ /^2\^/) printf("%.0f", 2 ^ substr(k, 3)); else print k }')
                awk -v p="$p" -v k="$k" -v a="${tpin[$p,$k]:-}" -v a1="${tpin[1,$k]:-}" \
                    -v b="${tpag[$p,$k]:-}" -v b1="${tpag[1,$k]:-}" -v ans="${ans[$p,$k]:-failed}" '
                    function col(t, t1) {
                        if (t == "") return "failed | - | -"
                        if (t1 == "") return sprintf("%.3f | - | -", t * 1e3)
                        return sprintf("%.3f | %.2fx | %.2f", t * 1e3, t1 / t, t1 / t / p)
                    }
                    BEGIN { printf("| %s | %s | %s | %s | %s |\n", p, k, col(a, a1), col(b, b1), ans) }'
            done
        done
        [ -z "$missing" ] || echo "($missing)"
    } | tee "$OUT/mgpu-host.txt"
    grep -q -E "failed|WRONG|error" "$OUT/mgpu-host.txt" && rc=1
fi

# ---- 2. data resident on each device, merged on the host
if want resident; then
    {
        echo "Resident data: $RN float32 a device (one context and one cl_mem each), cltopk_topk_buffer"
        echo "--algo $RALGO on each in a thread a device, each device's k results read back, the exact"
        echo "host merge of the P lists; median of $REPS runs, ms.  merge share = (whole - slowest"
        echo "top-k) / whole (goal < 5%).  No library call takes one cl_mem a device: this is the"
        echo "closest thing on the public API (bench/multi_resident.c)."
        echo
        echo "| P | n a device | k | slowest top-k | slowest read of k | host merge | whole | merge share | answer |"
        echo "|---|---|---|---|---|---|---|---|---|"
    } >"$OUT/mgpu-resident.txt"
    for p in $ps; do
        log "resident data: $RN float32 a device, k = $RK, --algo $RALGO on P = $p: $(first "$p")"
        timeout 300 "$mr" --devices "$(first "$p")" -n "$RN" -k "$RK" --algo "$RALGO" \
            --reps "$REPS" --check "$CHECK" >"$OUT/mgpu-resident-$p.log" 2>&1 || rc=1
        sed 's/^/    /' "$OUT/mgpu-resident-$p.log"
        grep -E '^\| [0-9]' "$OUT/mgpu-resident-$p.log" >>"$OUT/mgpu-resident.txt" ||
            echo "| $p | $RN | $RK | failed (mgpu-resident-$p.log) |" >>"$OUT/mgpu-resident.txt"
    done
    [ -z "$missing" ] || echo "($missing)" >>"$OUT/mgpu-resident.txt"
    cat "$OUT/mgpu-resident.txt"
    grep -q -E "failed|WRONG|error" "$OUT/mgpu-resident.txt" && rc=1
fi

# ---- 3. MPI: a rank a device, against one process with a context of P devices
if want mpi; then
    # in a subshell: the environment of Open MPI stays in it
    (
    mfail=0
    mp=${MGPU_TMP:-}
    if [ -z "$mp" ]; then
        mp=$(mktemp -d)
        trap 'rm -rf "$mp"' EXIT
    fi
    mb=$build
    if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$build/tools/cltopk-mpi" ]; then
        . "$src/bench/mpi-env.sh"
        mpi_env "${MGPU_MPI_DEBS:-$src/.gpu/mpi-debs}" "$mp" || exit 1
        tarball=${MGPU_TARBALL:-$(ls -t "$src"/.gpu/cltopk-*.tar.gz 2>/dev/null | head -n1)}
        [ -f "$tarball" ] || { log "mpi: no tarball to build --with-mpi (MGPU_TARBALL)"; exit 1; }
        mkdir -p "$mp/build"
        tar xzf "$tarball" -C "$mp/build"
        mb=$(ls -d "$mp"/build/cltopk-*)
        if ! (cd "$mb" && ./configure --with-mpi MPI_CFLAGS="-I$mlib/openmpi/include" \
                MPI_LIBS="-L$mlib/openmpi/lib -lmpi -Wl,-rpath-link,$mlib" &&
              make -j"$(nproc)") >"$OUT/mgpu-build-mpi.log" 2>&1; then
            log "mpi: the build with MPI failed (mgpu-build-mpi.log)"
            grep -E "MPI|error" "$OUT/mgpu-build-mpi.log" | tail -20
            exit 1
        fi
    fi
    [ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    log "mpi: $(mpirun --version 2>&1 | head -n1); cltopk-mpi of $mb"
    data=$mp/mgpu-data.f32
    "$mb/tools/cltopk" gen -t f32 -n "$N" -d uniform "$data" >/dev/null 2>&1 ||
        { log "mpi: cltopk gen -n $N failed"; exit 1; }
    {
        echo "MPI: $N float32 uniform in one file, each rank reading its slice (malloc'd memory),"
        echo "--algo $ALGO, the best of $REPS; ms, the slowest rank's.  one process: mpirun -np 1 with a"
        echo "context of the P devices; ranks: mpirun -np P, rank r's context on device r.  ranks /"
        echo "one process compares the whole calls (goal <= 1.1)."
        echo
        echo "| P | k | one process: whole call | ranks: local top-k | ranks: whole call | ranks / one process | answer |"
        echo "|---|---|---|---|---|---|---|"
    } >"$OUT/mgpu-mpi.txt"
    # field $2 of the bench line's "local top-k" (1) or "whole call" (2), seconds
    field() { grep '^bench ' "$1" | tail -n1 | awk -v w="$2" '{
        for (i = 1; i <= NF; i++) {
            if (w == 1 && $i == "top-k" && $(i - 1) == "local") print $(i + 1)
            if (w == 2 && $i == "call" && $(i - 1) == "whole") print $(i + 1)
        } }'; }
    for p in $ps; do
        for k in ${K//,/ }; do
            log "mpi: P = $p, k = $k: one process on $(first "$p"), then $p ranks"
            timeout 300 mpirun --oversubscribe -np 1 "$mb/tools/cltopk-mpi" topk -k "$k" \
                --device "$(first "$p")" --algo "$ALGO" --bench "$REPS" "$data" \
                >"$OUT/mgpu-mpi-one-$p-$k.log" 2>&1
            r1=$?
            # rank r: the r-th device of the list (its node-local rank)
            timeout 300 mpirun --oversubscribe -np "$p" -x MGPU_RANK_DEVICES="$(first "$p")" \
                bash -c 'IFS=, read -r -a l <<<"$MGPU_RANK_DEVICES"
                    r=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${SLURM_LOCALID:-0}}}
                    echo "rank $r: --device ${l[$r]}" >&2
                    exec "$0" "$1" --device "${l[$r]}" "${@:2}"' \
                "$mb/tools/cltopk-mpi" topk -k "$k" --algo "$ALGO" --bench "$REPS" "$data" \
                >"$OUT/mgpu-mpi-ranks-$p-$k.log" 2>&1
            r2=$?
            one=$(field "$OUT/mgpu-mpi-one-$p-$k.log" 2)
            loc=$(field "$OUT/mgpu-mpi-ranks-$p-$k.log" 1)
            whole=$(field "$OUT/mgpu-mpi-ranks-$p-$k.log" 2)
            # both answers against the first run's for this k (P = 1, one process)
            same=same
            for f in one ranks; do
                grep -E '^ *[0-9]+ +-?[0-9]+ +' "$OUT/mgpu-mpi-$f-$p-$k.log" >"$mp/answer-$f"
                [ -f "$mp/ref-$k" ] || cp "$mp/answer-$f" "$mp/ref-$k"
                [ "$(wc -l <"$mp/answer-$f")" -eq "$k" ] && cmp -s "$mp/answer-$f" "$mp/ref-$k" ||
                    same=DIFFERS
            done
            if [ $r1 -ne 0 ] || [ $r2 -ne 0 ] || [ -z "$one" ] || [ -z "$whole" ]; then
                echo "| $p | $k | failed (exit $r1, $r2: mgpu-mpi-*-$p-$k.log) |" >>"$OUT/mgpu-mpi.txt"
                mfail=1
                continue
            fi
            [ "$same" = same ] || mfail=1
            awk -v p="$p" -v k="$k" -v one="$one" -v loc="$loc" -v whole="$whole" -v same="$same" \
                'BEGIN { printf("| %s | %s | %.3f | %.3f | %.3f | %.2f | %s |\n", p, k, one * 1e3,
                    loc * 1e3, whole * 1e3, one > 0 ? whole / one : 0, same) }' >>"$OUT/mgpu-mpi.txt"
        done
    done
    [ -z "$missing" ] || echo "($missing)" >>"$OUT/mgpu-mpi.txt"
    cat "$OUT/mgpu-mpi.txt"
    exit $mfail
    ) || rc=1
fi
exit $rc
