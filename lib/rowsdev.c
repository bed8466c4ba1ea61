/* rowsdev.c - many top-k at once on the OpenCL device (cl/rows.cl): dense
 * rows, segments and kNN queries, one work-group per row, on device data or
 * on host data in batches of rows; and the CPU rows run on device data.
 *
 * Configuration (compile options of cl/rows.cl, CLTOPK_BITS): a work-group of
 * wg = 256 work-items taking r = 4 elements a round on GPUs (64 and 2
 * elsewhere), capped by the device's work-group size; KTOP, the kept pairs,
 * is the first of 32, 256, 1024, 2048 at or above k (few programs to build);
 * CAP, the candidate buffer, 2 * wg * r or KTOP, shrunk to wg * r where local
 * memory is short.  The largest k is the largest KTOP whose arrays fit the
 * device's local memory (2048 for 4-byte keys and 1024 for 8-byte keys in 48
 * KiB).  Few long dense rows are split into parts, a work-group each, whose
 * best k are merged by a second launch (a group a row): enough groups for the
 * device (4 a compute unit on GPUs), each part at least 4 rounds long, or
 * CLTOPK_BITS=parts=N.  Segments of at most 32 elements are sorted whole by
 * one work-item each, the others go to the classes of seg_class below.
 *
 * The register tile (cl/rows_tile.cl; CLTOPK_BITS tile=0 turns it off) takes
 * dense rows, parts of rows and segments of up to wg x rt elements (rt = 16 on
 * GPUs, 4 elsewhere, where a program of 16 unrolled slots takes half as long
 * again to build): k up to 1024, gathered sizes of 256 or 2048 pairs and
 * position widths of 16 or 31 bits, so that few programs serve every call.
 *
 * The warp kernel (cl/rows_warp.cl; CLTOPK_BITS warp=1, the GPU default)
 * takes dense rows of 32-bit keys of up to wcols columns at k up to wkmax
 * before the tile: a work-group of 32 a row (rows of up to 1024 columns on
 * GPUs) or of 32 wn, wn warps of 32 each holding up to wrmax columns a
 * work-item (warp_fit below).
 *
 * Long dense rows at a k the tile does not take go, on GPUs, to the sample
 * filter (sf_plan below; rows_sf_sample and rows_sf_filter of the tile's
 * program, with a sample a row, several filtering groups a row and the
 * candidates' top-k by the tile; CLTOPK_BITS path=sf forces it).
 *
 * kNN launches go to the distance tiles (lib/knndev.c, cl/knn.cl, which
 * builds rows.cl's kNN mode with this configuration for its selections);
 * rows_knn, a work-group a query computing its distances in place, runs
 * where the tiles are off (CLTOPK_KNN=tile=0) or do not fit the device. */
#include "internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#if HAVE_OPENCL

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned wg, r, ktop, cap;
    size_t parts; /* parts of a dense row (0: chosen per launch) */
    unsigned tile, rt; /* the register tile (cl/rows_tile.cl): on, elements a work-item */
    unsigned maxima;   /* the tile's threshold of the maxima (tile.h) */
    size_t tkmax;      /* dense rows take the tile up to this k */
    unsigned path, s, sfcap, force, check; /* the sample filter (sf_plan) */
    size_t sfpart;
    unsigned fuse, srun, sfull, fwg, frt, fmax, sfunr;
    unsigned shfl;              /* the finish's sort by shuffles (TILE_SHFL; 0 off) */
    unsigned fpre;              /* its finish's passes past the shared leading bytes */
    unsigned warp;              /* the warp kernel (cl/rows_warp.cl): on */
    size_t wcols, wkmax, wcap;  /* its largest row and k, its candidates (0: 8 k, >= 512) */
    size_t wn, wrmax;           /* its warps a row (0: the fewest), most columns a work-item */
    unsigned wwin;              /* its loads of short rows inside the buffer untested */
    unsigned wvec;              /* its loads of full rows by 16-byte vectors */
    unsigned wappend;           /* its candidates appended: 0 chosen, 1 a slot, 2 a work-item,
                                   3 at prefixes */
    unsigned tmload;            /* the tile's loads unconditional, keys masked */
    unsigned ws, wsu, wsg, wsp; /* the streaming warp kernel (cl/rows_ws.cl): on, chunks
                                   in flight, warps a group, NVIDIA's warp instructions */
    size_t wskmax, wsrows;      /* its largest k; with ws=2, the fewest rows a compute unit */
    unsigned wlean;             /* the warp kernel's proxies */
    int wg_set; /* CLTOPK_BITS wg= given */
} rows_cfg;

/* a register-tile launch (cl/rows_tile.cl): work-items, elements each,
 * gathered pairs, position bits; dense rows: parts a row and their length */
typedef struct {
    unsigned wg, rt, mcap, pb, nomax, mload, shfl, pre;
    size_t parts, plen;
} tile_cfg;
#define TILE_KMAX 1024 /* the largest k of the register tile */

static const unsigned ktops[] = {32, 256, 1024, 2048};
#define ROWS_MAXLEN 0xFFFFFFFEull /* positions are 32-bit, all ones the sentinel */
#define ROWS_SHORT 32             /* segments a work-item sorts alone (at most 256) */

/* CLTOPK_BITS: wg work-items a group and r elements a work-item a round (both
 * powers of two), parts of a long dense row (0: chosen from the rows and the
 * device's compute units) */
enum { BP_WG, BP_R, BP_PARTS, BP_TILE, BP_RT, BP_MAXIMA, BP_TKMAX, BP_PATH, BP_S, BP_CAP,
       BP_FORCE, BP_CHECK, BP_SFPART, BP_FUSE, BP_WARP, BP_WCOLS, BP_WKMAX, BP_WCAP,
       BP_WWIN, BP_TMLOAD, BP_WN, BP_WRMAX, BP_SRUN, BP_SFULL, BP_FWG, BP_FRT, BP_FMAX, BP_SFUNR,
       BP_SHFL, BP_WVEC, BP_WAPPEND, BP_EACH, BP_STAGE, BP_WS, BP_WSU, BP_WSG, BP_WSP, BP_WSKMAX,
       BP_WSROWS, BP_WLEAN, BP_FPRE, BP_N };
enum { BPATH_AUTO = 0, BPATH_SF, BPATH_NOSF };
#define WARP_COLS 4096 /* the warp kernel's longest row: 32 x 128 registers a work-item */
#define WARP_KMAX 128  /* its largest k: each work-item's 4 best hold T (cl/rows_warp.cl) */
#define WARP_WN 8      /* its most warps a row: 256 work-items */
#define WARP_WR 128    /* its most columns a work-item */
#define WAPPEND_WN 2   /* its most warps a row whose candidates take an atomic a work-item */
#define WS_KMAX 32     /* the streaming warp kernel's largest k: a list of 32 across a warp */
#define WS_BUF 192     /* its buffer's 64-bit words a warp, at most (cl/rows_ws.cl WSB) */
/* rows of at least this many columns take the sample filter before the
 * register tile (H200: 64 x 131072, k = 50, 0.043 ms against the tile's 0.054;
 * 16384 x 4096, k = 32, 0.425 against 0.196) and the streaming warp kernel */
#define SF_LONG 65536
enum { BCHECK_NONE = 0, BCHECK_SERVED, BCHECK_FALLBACK };
static const char *const bits_path_words[] = {"auto", "sf", "nosf", NULL};
static const char *const bits_force_words[] = {"none", "all", "few", NULL};
static const char *const bits_each_words[] = {"auto", "on", "off", NULL};
static const char *const bits_stage_words[] = {"map", "read", NULL};
static const char *const bits_check_words[] = {"none", "served", "fallback", NULL};
static const cltopk_param bits_params[] = {
    [BP_WG] = {.name = "wg", .gpu = 256, .cpu = 64, .min = 16, .max = 1024, .integer = 1},
    [BP_R] = {.name = "r", .gpu = 4, .cpu = 2, .min = 1, .max = 16, .integer = 1},
    [BP_PARTS] = {.name = "parts", .gpu = 0, .cpu = 0, .min = 0, .max = 65536, .integer = 1},
    [BP_TILE] = {.name = "tile", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    [BP_RT] = {.name = "rt", .gpu = 16, .cpu = 4, .min = 1, .max = 32, .integer = 1},
    /* the tile's threshold of the maxima (tile.h; 0: radix passes only) */
    [BP_MAXIMA] = {.name = "maxima", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    /* dense rows take the tile up to this k (the H200: the streaming kernel
     * took 0.54 ms on 1024 x 65536 at k = 256, the tile 0.99 ms) */
    [BP_TKMAX] = {.name = "tkmax", .gpu = 128, .cpu = 128, .min = 1, .max = 4096,
                  .integer = 1},
    /* the sample filter of long dense rows (sf_plan below): path=sf where it
     * can run, nosf never, auto where its model says; its sample (0: 1024 on
     * GPUs, 256 elsewhere), candidates a row (0: from the sample), elements
     * a filter group reads (0: 16384 on GPUs, 2048 elsewhere); force=all|few
     * puts T below everything or above everything but the best possible
     * pair; check=served|fallback fails the call (CLTOPK_ERR_INTERNAL)
     * unless every row took that way (tests) */
    [BP_PATH] = {.name = "path", .min = 0, .max = 2, .integer = 1, .words = bits_path_words},
    [BP_S] = {.name = "s", .min = 0, .max = 1 << 20, .integer = 1},
    [BP_CAP] = {.name = "cap", .min = 0, .max = 1 << 20, .integer = 1},
    [BP_FORCE] = {.name = "force", .min = 0, .max = 2, .integer = 1, .words = bits_force_words},
    [BP_CHECK] = {.name = "check", .min = 0, .max = 2, .integer = 1, .words = bits_check_words},
    [BP_SFPART] = {.name = "sfpart", .min = 0, .max = 1 << 30, .integer = 1},
    /* 1: the filter's last group of a row finishes it; 0: a third launch,
     * a group a row (the filter then carries no tile registers: 40 against
     * 56-64 on the H200, where 0 measured 0-12% faster in four runs: 1024 x
     * 65536 k = 256 0.204-0.210 ms against 0.213-0.224, 256 x 262144 k =
     * 1024 0.190 against 0.215, 1024 x 65536 k = 32 and 64 x 131072 k = 50
     * alike; bench/RESULTS.md) */
    [BP_FUSE] = {.name = "fuse", .gpu = 0, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    /* the warp kernel (cl/rows_warp.cl, warp_fit below): on (GPUs) or off
     * (elsewhere, where the register tile is tuned), the most columns
     * (wcols: 4096 on GPUs, where the H200 measured it faster than the
     * register tile at every width to 4096 at k <= 32 once rows past 1024
     * columns took several warps of 32 columns a work-item: 16384 x 4096 k =
     * 32 0.149 ms against 0.189, 16384 x 2048 0.097 against 0.119; one warp
     * of 128 columns a work-item took 255 registers, spilled and lost) and
     * the largest k (wkmax) it takes, the candidates it ranks
     * (wcap; 0: 8 k, at least 512; a smaller value sends more rows to its
     * exact bisection: tests) */
    [BP_WARP] = {.name = "warp", .gpu = 1, .cpu = 0, .min = 0, .max = 1, .integer = 1},
    [BP_WCOLS] = {.name = "wcols", .gpu = WARP_COLS, .cpu = WARP_COLS, .min = 1, .max = WARP_COLS,
                  .integer = 1},
    [BP_WKMAX] = {.name = "wkmax", .gpu = 32, .cpu = 32, .min = 1, .max = WARP_KMAX,
                  .integer = 1},
    [BP_WCAP] = {.name = "wcap", .min = 0, .max = 4096, .integer = 1},
    /* rows of fewer than 32 wr columns: 1, a group whose 32 wr slots lie
     * inside the input buffer loads them with no test (the next row's
     * elements past the row's end, dropped); 0: every load clamped to the
     * row's last column.  H200, 65536 rows, k = 16 (ms, 1 against 0): 1000
     * columns 0.157 / 0.176, 992 0.161 / 0.176, 500 0.106 / 0.113.  GPUs
     * only: CPU devices always clamp (POCL 5.0 compiled the window's branch
     * wrongly, only in a process that had built many other programs:
     * t/rows.t read past its local memory) */
    [BP_WWIN] = {.name = "wwin", .gpu = 1, .cpu = 0, .min = 0, .max = 1, .integer = 1},
    /* the register tile's loads of a row or part (tile_from_keys): 1, all
     * unconditional (clamped to the last element) and the keys masked with
     * no branch, as the warp kernel's; 0, the default: each load behind its
     * own test (the H200, 1 against 0: 16384 x 4096 k = 32 0.221 against
     * 0.198 ms, k = 8 0.177 / 0.161, 65536 x 1024 k = 16 0.242 / 0.219,
     * 1024 x 65536 k = 256 0.212 / 0.207: the tile's occupancy already hid
     * its loads).  1 on other devices: a private value chosen by a branch
     * and live across a barrier is what POCL 5 and 6 build wrongly in some
     * processes (README.md, Troubleshooting) */
    [BP_TMLOAD] = {.name = "tmload", .gpu = 0, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    /* the warp kernel's warps a row (wn: 0 chooses the fewest whose
     * work-items hold at most wrmax columns each; else 1, 2, 4 or 8) and its
     * most columns a work-item before it takes more warps (wrmax: 32 on
     * GPUs, where 128 took 255 registers and spilled, and 16 (8 warps at
     * 4096 columns, 64 registers) took 0.203 ms against 32's 0.149 at 16384
     * x 4096, k = 32, on the H200; 128 elsewhere) */
    [BP_WN] = {.name = "wn", .min = 0, .max = WARP_WN, .integer = 1},
    [BP_WRMAX] = {.name = "wrmax", .gpu = 32, .cpu = WARP_WR, .min = 1, .max = WARP_WR,
                  .integer = 1},
    /* the long rows' sample filter, continued: its sample in runs of srun
     * neighbours (a power of two; 1: one element a stratum; 8 on GPUs, a
     * 32-byte sector of f32 a run: the H200's sample of 1024 x 65536 took
     * 14.5 us against 35 with 1), its filter's whole rounds without tests
     * (sfull 1, GPUs: 0.203 against 0.209 ms at 1024 x 65536, k = 256) or
     * every load tested (0), and, with fuse=0, the finish's own tile (fwg
     * work-items of frt slots; 0: the filter's; fwg=128,frt=32 measured
     * slower but at 4096 x 16384) and its threshold of the maxima (fmax, see
     * sf_plan) */
    [BP_SRUN] = {.name = "srun", .gpu = 8, .cpu = 1, .min = 1, .max = 64, .integer = 1},
    [BP_SFULL] = {.name = "sfull", .gpu = 1, .cpu = 0, .min = 0, .max = 1, .integer = 1},
    [BP_FWG] = {.name = "fwg", .min = 0, .max = 1024, .integer = 1},
    [BP_FRT] = {.name = "frt", .min = 0, .max = 32, .integer = 1},
    [BP_FMAX] = {.name = "fmax", .gpu = 2, .cpu = 1, .min = 0, .max = 2, .integer = 1},
    /* vectors a filtering work-item loads a round (SF_UNR), a power of two
     * to 16: 4 everywhere, the kernel's default, so that the tile's program
     * serves.  The H200 at 1024 x 65536, k = 256: the filter 87.4-87.8 us
     * with 4 against 94.8-96.0 with 8 (whose loaded vectors held some 32 of
     * its 40 registers), the call 0.157 ms against 0.160-0.163
     * (bench/RESULTS.md) */
    [BP_SFUNR] = {.name = "sfunr", .gpu = 4, .cpu = 4, .min = 1, .max = 16, .integer = 1},
    /* the sample filter's finish: its bitonic sort of 2 wg slots in
     * registers, the steps within a warp by shuffles (cl/tile.h TILE_SHFL):
     * 1, the GPU default, on NVIDIA's platform (inline PTX; nothing
     * elsewhere), 2 the shuffles' partners through local memory on any
     * device (tests), 0 every step through local memory.
     * The H200: 1024 x 65536 k = 256 its finish 39.5 us against 44.6, the
     * call 0.152-0.153 ms against 0.154-0.160; 4096 x 16384 k = 256 0.280
     * against 0.299-0.308 (bench/RESULTS.md) */
    [BP_SHFL] = {.name = "shfl", .gpu = 1, .cpu = 0, .min = 0, .max = 2, .integer = 1},
    /* the warp kernel's loads: wvec=1 loads full rows (exactly 32 wn wr
     * columns, wr a multiple of 4, every row's start a multiple of 4
     * elements) by 16-byte vectors, a work-item's slots 4q .. 4q + 3 four
     * neighbouring columns; other rows, and wvec=0, one element a load
     * (cl/rows_warp.cl: WVEC).  The H200, two interleaved rounds (ms, 1
     * against 0): 65536 x 1024 k = 16 0.142-0.146 / 0.151-0.152, 16384 x
     * 2048 k = 32 0.086 / 0.088-0.090, 16384 x 4096 k = 32 0.128-0.131 /
     * 0.128-0.129 (72 registers either way).  On CPU devices too, where the
     * warp kernel runs only when CLTOPK_BITS asks for it (tests: the GPU's
     * program but for the device) */
    [BP_WVEC] = {.name = "wvec", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    /* how the warp kernel appends its candidates to local memory (WONE): 1,
     * a local atomic for each slot that holds one (the work-item waits for
     * each); 2, a work-item's counted first, then one atomic of their
     * number, the candidates taken first by their 32-bit keys against T's
     * (cl/rows_warp.cl: WREL); 3, counted, summed over the group and written
     * at each work-item's prefix (the kernel's first way, slower: 0.156
     * against 0.129 ms at 16384 x 4096); 0 chooses 2 up to WAPPEND_WN = 2
     * warps a row, 1 above.  The H200 (ms, two interleaved rounds, 2
     * against 1): 65536 x 1024 k = 16 0.134-0.138 / 0.142-0.146 without
     * WREL, 0.119-0.120 with it (0.136-0.139 by composites), 16384 x 2048 k
     * = 32 0.082-0.083 / 0.087, but 16384 x 4096 (4 warps) 0.136-0.137 /
     * 0.131-0.132: 90 registers against 72 there, fewer groups a compute
     * unit (bench/RESULTS.md) */
    [BP_WAPPEND] = {.name = "wappend", .min = 0, .max = 3, .integer = 1},
    /* cl_mem rows or segments that the device kernel cannot run (k above its
     * largest): each row by a single-array device algorithm in turn
     * (lib/rowseach.c) where AUTO's model says so (auto), always (on), or
     * never (off: the CPU on a host copy) */
    [BP_EACH] = {.name = "each", .min = 0, .max = 2, .integer = 1, .words = bits_each_words},
    /* the CPU's rows on a host copy of cl_mem data: the input mapped (map,
     * the default; read where the map fails) or read into host memory */
    [BP_STAGE] = {.name = "stage", .min = 0, .max = 1, .integer = 1, .words = bits_stage_words},
    /* the streaming warp kernel (cl/rows_ws.cl, ws_fit below), ws: 0 never,
     * 1 wherever it can (before the warp kernel), 2 (the GPU default) on
     * NVIDIA's platform for the rows the warp kernel does not take (more than
     * wcols columns or k above wkmax) below SF_LONG columns, at least wsrows
     * rows a compute unit; its chunks of 128 columns in flight (wsu), warps
     * a work-group (wsg, with NVIDIA's warp instructions: wsp=1, where the
     * platform has them; wsp=0 or other platforms exchange through local
     * memory, a group a row) and its largest k (wskmax).  The H200 (ms, the register tile
     * it replaces / ws): 8192 x 8192 k = 32 0.248 / 0.125, 4096 x 16384
     * 0.222 / 0.111, 2048 x 32768 0.228 / 0.105, 16384 x 8192 k = 8 0.39 /
     * 0.155; but 16384 x 4096 k = 32 0.127 by the warp kernel / 0.150, 65536
     * x 1024 k = 16 0.118 / 0.173 (bench/RESULTS.md) */
    [BP_WS] = {.name = "ws", .gpu = 2, .cpu = 0, .min = 0, .max = 2, .integer = 1},
    [BP_WSU] = {.name = "wsu", .gpu = 4, .cpu = 2, .min = 1, .max = 16, .integer = 1},
    [BP_WSG] = {.name = "wsg", .gpu = 1, .cpu = 1, .min = 1, .max = 8, .integer = 1},
    [BP_WSP] = {.name = "wsp", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    [BP_WSKMAX] = {.name = "wskmax", .gpu = WS_KMAX, .cpu = WS_KMAX, .min = 1, .max = WS_KMAX,
                   .integer = 1},
    [BP_WSROWS] = {.name = "wsrows", .gpu = 8, .cpu = 8, .min = 0, .max = 1 << 20,
                   .integer = 1},
    /* the warp kernel by proxies of the keys (cl/rows_warp.cl WLEAN: fewer
     * instructions an element), where each work-item keeps its one best of
     * at most 32 columns; on by default on GPUs.  The H200 (ms, 0 / 1, two
     * rounds, AUTO): 16384 x 4096 k = 32 0.129-0.134 / 0.099-0.101, 65536 x
     * 1024 k = 16 0.120-0.124 / 0.098-0.100, 16384 x 2048 k = 32 0.080-0.084
     * / 0.067-0.077, 65536 x 1000 k = 16 0.142-0.144 / 0.126 (bench/RESULTS.md) */
    [BP_WLEAN] = {.name = "wlean", .gpu = 1, .cpu = 0, .min = 0, .max = 1, .integer = 1},
    /* the sample filter's finish: its radix passes from the first byte where
     * its candidates' keys differ (cl/tile.h TILE_PRE), the bytes they all
     * share (candidates above a row's threshold share their leading bits)
     * skipped.  The H200 (ms, three rounds, 0 / 1): 1024 x 65536 k = 256
     * 0.149-0.155 / 0.146-0.152 (the finish 36.5 us against 39.5), 4096 x
     * 16384 k = 256 0.283-0.286 / 0.271-0.278 (113 us against 124), 2048 x
     * 32768 k = 512 0.270-0.279 / 0.267-0.271; 256 x 262144 k = 1024 and 512
     * x 131072 k = 128 alike (bench/RESULTS.md).  Not measured on CPU
     * devices (0 there: a program fewer to build) */
    [BP_FPRE] = {.name = "fpre", .gpu = 1, .cpu = 0, .min = 0, .max = 1, .integer = 1},
};
_Static_assert(BP_N <= CLTOPK_MAX_PARAMS, "CLTOPK_BITS has more parameters than lib/tune.h holds");
static const cltopk_param_table bits_table = {"CLTOPK_BITS", bits_params, BP_N, NULL};

/* CLTOPK_BITS's parameter `which` (an integer one) for rq, or -1 with the
 * reason in why (a bad CLTOPK_BITS) */
static int bits_value(const cltopk_context *ctx, const cltopk_request *rq, int which, char *why,
                      size_t whylen)
{
    int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    cltopk_tune_for f = {gpu, ctx->caps.device_name, (unsigned)rq->bytes, -1, rq->k};
    cltopk_params p;
    if (cltopk_params_get(rq->tune, &bits_table, &f, &p, why, whylen) != 0)
        return -1;
    return (int)p.v[which];
}

int cltopk_rows_each_mode(const cltopk_context *ctx, const cltopk_request *rq, char *why,
                          size_t whylen)
{
    return bits_value(ctx, rq, BP_EACH, why, whylen);
}

static size_t local_bytes(const rows_cfg *c, int bytes)
{
    return ((size_t)c->ktop + c->cap) * ((size_t)bytes + 4) + 64;
}

/* the configuration for k: 1, or 0 with the reason in why (a bad CLTOPK_BITS,
 * k above the kept lists, local memory too small) */
static int rows_config(const cltopk_context *ctx, const cltopk_request *rq, size_t k, rows_cfg *c,
                       char *why, size_t whylen)
{
    int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    cltopk_tune_for f = {gpu, ctx->caps.device_name, (unsigned)rq->bytes, -1, k};
    cltopk_params p;
    if (cltopk_params_get(rq->tune, &bits_table, &f, &p, why, whylen) != 0)
        return 0;
    c->wg = (unsigned)p.v[BP_WG];
    c->wg_set = (p.set >> BP_WG) & 1u;
    c->r = (unsigned)p.v[BP_R];
    c->parts = (size_t)p.v[BP_PARTS];
    c->tile = (unsigned)p.v[BP_TILE];
    c->rt = (unsigned)p.v[BP_RT];
    c->maxima = (unsigned)p.v[BP_MAXIMA];
    c->tkmax = (size_t)p.v[BP_TKMAX];
    c->path = (unsigned)p.v[BP_PATH];
    c->s = (unsigned)p.v[BP_S];
    c->sfcap = (unsigned)p.v[BP_CAP];
    c->force = (unsigned)p.v[BP_FORCE];
    c->check = (unsigned)p.v[BP_CHECK];
    c->sfpart = (size_t)p.v[BP_SFPART];
    c->fuse = (unsigned)p.v[BP_FUSE];
    c->srun = (unsigned)p.v[BP_SRUN];
    c->sfull = (unsigned)p.v[BP_SFULL];
    c->fwg = (unsigned)p.v[BP_FWG];
    c->frt = (unsigned)p.v[BP_FRT];
    c->fmax = (unsigned)p.v[BP_FMAX];
    c->sfunr = (unsigned)p.v[BP_SFUNR];
    /* 1 is NVIDIA's inline PTX: off on other platforms */
    c->shfl = (unsigned)p.v[BP_SHFL];
    if (c->shfl == 1 && !ctx->caps.ptx)
        c->shfl = 0;
    c->warp = (unsigned)p.v[BP_WARP];
    c->wcols = (size_t)p.v[BP_WCOLS];
    c->wkmax = (size_t)p.v[BP_WKMAX];
    c->wcap = (size_t)p.v[BP_WCAP];
    c->wwin = (unsigned)p.v[BP_WWIN];
    c->wvec = (unsigned)p.v[BP_WVEC];
    c->wappend = (unsigned)p.v[BP_WAPPEND];
    c->tmload = (unsigned)p.v[BP_TMLOAD];
    c->wn = (size_t)p.v[BP_WN];
    c->wrmax = (size_t)p.v[BP_WRMAX];
    c->ws = (unsigned)p.v[BP_WS];
    c->wsu = (unsigned)p.v[BP_WSU];
    c->wsp = (unsigned)p.v[BP_WSP] && ctx->caps.ptx;
    c->wsg = c->wsp ? (unsigned)p.v[BP_WSG] : 1u; /* (through local memory: a group a row) */
    c->wskmax = (size_t)p.v[BP_WSKMAX];
    c->wsrows = (size_t)p.v[BP_WSROWS];
    c->wlean = (unsigned)p.v[BP_WLEAN];
    c->fpre = (unsigned)p.v[BP_FPRE];
    /* powers of two (fwg and frt: or 0, the filter's; fwg at least 16) */
    const struct {
        const char *name;
        unsigned v, least;
        int zero;
    } p2[] = {{"wg", c->wg, 1, 0},     {"r", c->r, 1, 0},       {"rt", c->rt, 1, 0},
              {"srun", c->srun, 1, 0}, {"fwg", c->fwg, 16, 1}, {"frt", c->frt, 1, 1},
              {"sfunr", c->sfunr, 1, 0}};
    for (size_t i = 0; i < sizeof p2 / sizeof p2[0]; i++)
        if (!(p2[i].zero && p2[i].v == 0) && (!cltopk_is_pow2(p2[i].v) || p2[i].v < p2[i].least)) {
            snprintf(why, whylen, "CLTOPK_BITS: %s = %u must be a power of two%s%s", p2[i].name,
                     p2[i].v, p2[i].least > 1 ? " of at least 16" : "",
                     p2[i].zero ? ", or 0 (the filter's)" : "");
            return 0;
        }
    if (c->wn && !cltopk_is_pow2(c->wn)) {
        snprintf(why, whylen, "CLTOPK_BITS: wn = %zu must be 0 (the warp kernel chooses) or a "
                 "power of two", c->wn);
        return 0;
    }
    size_t maxwg = cltopk_pow2_le(ctx->caps.max_wg ? ctx->caps.max_wg : 1);
    while (c->wg > maxwg)
        c->wg >>= 1;
    while (c->fwg > maxwg)
        c->fwg >>= 1;
    c->ktop = 0;
    for (size_t i = 0; i < sizeof ktops / sizeof ktops[0]; i++)
        if (ktops[i] >= k) {
            c->ktop = ktops[i];
            break;
        }
    if (!c->ktop) {
        snprintf(why, whylen, "the device kernel keeps at most %u pairs a row (k = %zu)",
                 ktops[sizeof ktops / sizeof ktops[0] - 1], k);
        return 0;
    }
    unsigned round = c->wg * c->r;
    c->cap = 2 * round > c->ktop ? 2 * round : c->ktop;
    if (local_bytes(c, rq->bytes) > ctx->caps.local_mem)
        c->cap = round > c->ktop ? round : c->ktop;
    if (local_bytes(c, rq->bytes) > ctx->caps.local_mem) {
        snprintf(why, whylen, "the device kernel's arrays for k = %zu (%zu bytes) do not fit "
                 "the %llu bytes of local memory of %s", k, local_bytes(c, rq->bytes),
                 (unsigned long long)ctx->caps.local_mem, ctx->name);
        return 0;
    }
    return 1;
}

/* the largest k the device kernel takes for rq here (0: none, the reason in why) */
static size_t rows_kmax(cltopk_context *ctx, const cltopk_request *rq, char *why, size_t whylen)
{
    if (!ctx->is_cl) {
        snprintf(why, whylen, "the device kernel needs an OpenCL context (this is \"cpu\")");
        return 0;
    }
    if (!ctx->caps.int64) {
        snprintf(why, whylen, "the device kernel needs 64-bit integers, which %s lacks",
                 ctx->name);
        return 0;
    }
    for (size_t i = sizeof ktops / sizeof ktops[0]; i-- > 0;) {
        rows_cfg c;
        if (rows_config(ctx, rq, ktops[i], &c, why, whylen))
            return ktops[i];
    }
    return 0;
}

int cltopk_rows_dev_can(cltopk_context *ctx, const cltopk_request *rq,
                        const cltopk_rows_job *job, char *why, size_t whylen)
{
    size_t kmax = rows_kmax(ctx, rq, why, whylen);
    if (!kmax)
        return 0;
    if (rq->k > kmax) {
        snprintf(why, whylen, "the device kernel takes k up to %zu for %d-byte keys on this "
                 "device (k = %zu); use cpu-heap", kmax, rq->bytes, rq->k);
        return 0;
    }
    size_t longest = 0;
    if (job->mode == ROWS_DENSE)
        longest = job->cols;
    else if (job->mode == ROWS_KNN)
        longest = job->np;
    else {
        const int64_t *o = job->offsets;
        const size_t n = job->nrows;
#pragma omp parallel for reduction(max : longest) schedule(static) if (n > 65536)
        for (size_t s = 0; s < n; s++)
            if ((size_t)(o[s + 1] - o[s]) > longest)
                longest = (size_t)(o[s + 1] - o[s]);
    }
    /* kNN's distances are fma over float32: the CPU's bits only where the
     * device rounds as it does */
    if (job->mode == ROWS_KNN && (!cltopk_fp_exact(ctx, 0, why, whylen) ||
                                  !cltopk_knn_dev_can(ctx, rq, job, why, whylen)))
        return 0;
    if ((unsigned long long)longest > ROWS_MAXLEN || (job->mode == ROWS_KNN && job->d > 0xFFFFFFFFu)) {
        snprintf(why, whylen, "the device kernel takes rows of fewer than 2^32 - 1 elements "
                 "(32-bit positions); use cpu-heap");
        return 0;
    }
    /* host data travels a batch of whole rows at a time (the kNN points at once) */
    size_t chunk = cltopk_chunk_elems(ctx, rq->bytes);
    size_t need = job->mode == ROWS_KNN ? job->np * job->d : longest;
    if (!rq->on_device && need > chunk) {
        snprintf(why, whylen, "host data goes to the device in batches of whole rows, and %s "
                 "of %zu elements exceeds one device chunk of %zu; use cpu-heap",
                 job->mode == ROWS_KNN ? "the points" : "a row", need, chunk);
        return 0;
    }
    return 1;
}

/* host memory (segment offsets, segment ids) copied into scratch slot `slot`
 * (grown as needed) by a blocking write that follows the context's work, so
 * that the call may return before its launches run and the caller may reuse
 * the memory (a blocking write from pageable memory is several times faster
 * than clCreateBuffer with CL_MEM_COPY_HOST_PTR on NVIDIA's driver) */
static int rows_host_copy(cltopk_context *ctx, int slot, const void *p, size_t bytes,
                          const char *what, cl_mem *out)
{
    int st = cltopk_scratch(ctx, slot, bytes ? bytes : 1, out);
    if (st != CLTOPK_OK || !bytes)
        return st;
    return cltopk_write_own(ctx, *out, p, bytes, what);
}

/* one launch over nrows rows: dense rows of `in` from in_off; segments with
 * offsets `offs` (nrows + 1, relative to in_off); or kNN queries `q` (from
 * q_off) against the points `in` (from in_off).  Outputs from element 0. */
typedef struct {
    cl_mem in, offs, q;
    const int64_t *hoffs; /* segments: the launch's nrows + 1 offsets on the host */
    long long in_off;
    size_t q_off, nrows;
    cl_mem out_keys, out_index;
} rows_launch_args;

/* the parts of a dense row: CLTOPK_BITS's, else enough groups for the
 * device (4 a compute unit on a GPU, 1 elsewhere) where rows are few and long
 * (each part at least 4 rounds of the group) */
static size_t dense_parts(const cltopk_context *ctx, const cltopk_rows_job *job,
                          const rows_cfg *c)
{
    size_t parts = c->parts;
    if (parts == 0) {
        int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
        size_t want = (size_t)(ctx->caps.compute_units ? ctx->caps.compute_units : 1) *
                      (gpu ? 4 : 1);
        size_t maxp = job->cols / (4 * (size_t)c->wg * c->r);
        parts = job->nrows < want ? (want + job->nrows - 1) / job->nrows : 1;
        if (parts > maxp)
            parts = maxp;
    }
    if (parts > job->cols)
        parts = job->cols;
    return parts ? parts : 1;
}

/* the register tile for groups holding up to `hold` elements whose positions
 * are at most maxpos, at k: 1 with t filled (parts 1), or 0 (off, k too
 * large, too long, local memory short).  Work-items: the fewest powers of two
 * from 32 that hold the elements, at most c->wg. */
static int tile_fit(const cltopk_context *ctx, const cltopk_request *rq, const rows_cfg *c,
                    size_t k, size_t hold, size_t maxpos, tile_cfg *t)
{
    if (!c->tile || k == 0 || k > TILE_KMAX || c->wg < 16)
        return 0;
    unsigned wg = c->wg < 32 ? c->wg : 32;
    while ((size_t)wg * c->rt < hold && wg < c->wg)
        wg <<= 1;
    if ((size_t)wg * c->rt < hold)
        return 0;
    /* two position widths and two gathered sizes: few programs serve every
     * row length and k (a program build is seconds on a CPU device) */
    unsigned pb = (unsigned long long)maxpos <= 65534 ? 16 : 31;
    if (((1ull << pb) - 2) < (unsigned long long)maxpos)
        return 0;
    unsigned mcap = k <= 128 ? 256 : 2048;
    if ((size_t)mcap * ((size_t)rq->bytes + 4) + 2048 > ctx->caps.local_mem)
        return 0;
    *t = (tile_cfg){.wg = wg, .rt = c->rt, .mcap = mcap, .pb = pb, .nomax = !c->maxima,
                    .mload = c->tmload, .parts = 1, .plen = hold};
    return 1;
}

/* the register tile for dense rows: parts of a row the fewest that fit a
 * group (more where rows are fewer than the device wants groups, as long as
 * the merge's parts * k candidates fit a group), or CLTOPK_BITS's parts */
static int tile_dense(const cltopk_context *ctx, const cltopk_request *rq,
                      const cltopk_rows_job *job, const rows_cfg *c, tile_cfg *t)
{
    size_t k = rq->k, cols = job->cols, tl = (size_t)c->wg * c->rt;
    if (!c->tile || k == 0 || cols == 0 || k > c->tkmax)
        return 0;
    size_t parts = c->parts ? c->parts : (cols + tl - 1) / tl;
    if (!c->parts) {
        int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
        size_t want = (size_t)(ctx->caps.compute_units ? ctx->caps.compute_units : 1) *
                      (gpu ? 4 : 1);
        size_t fill = job->nrows < want ? (want + job->nrows - 1) / job->nrows : 1;
        size_t most = tl / k < cols / (4 * k) ? tl / k : cols / (4 * k);
        if (fill > most)
            fill = most;
        if (fill > parts)
            parts = fill;
    }
    if (parts > cols)
        parts = cols;
    if (parts > 1 && parts > tl / k)
        return 0;
    size_t plen = (cols + parts - 1) / parts;
    parts = (cols + plen - 1) / plen; /* no empty part */
    size_t hold = parts > 1 && parts * k > plen ? parts * k : plen;
    if (!tile_fit(ctx, rq, c, k, hold, cols - 1, t))
        return 0;
    t->parts = parts;
    t->plen = plen;
    return 1;
}

/* ---------------------------------------------------------------------------
 * The warp kernel (cl/rows_warp.cl): a row a work-group of g = 32 wn holding
 * it in registers, wr columns a work-item (the row's columns / g, rounded up
 * to a power of two up to 32, then to a multiple of 32: few programs; wn the
 * fewest warps whose wr is at most wrmax, or CLTOPK_BITS wn=), a threshold T
 * the least of each warp's kw-th best (kw = ceil(k / wn)) of its work-items'
 * wq = ceil(2 kw / 32) best (at most 4), up to wcap candidates at or above T
 * ranked in local memory (an exact bisection where more); with wlean, where
 * wq is 1 and wr at most 32, by proxies of the keys (WLEAN). 32-bit keys;
 * dense rows of up to wcols columns at k up to wkmax. */
typedef struct {
    unsigned wn, wr, wq, wcap, wwin, wvec, wone, lean;
} warp_cfg;

static int warp_fit(const cltopk_context *ctx, const cltopk_request *rq,
                    const cltopk_rows_job *job, const rows_cfg *c, warp_cfg *w)
{
    size_t k = rq->k, cols = job->cols;
    /* (wkmax and wcols are at most WARP_KMAX and WARP_COLS: bits_params) */
    if (!c->warp || rq->bytes != 4 || k == 0 || cols == 0 || k > c->wkmax || cols > c->wcols ||
        cols < k)
        return 0;
    size_t wn = c->wn;
    if (!wn)
        for (wn = 1; wn < WARP_WN && (cols + 32 * wn - 1) / (32 * wn) > c->wrmax; wn <<= 1)
            ;
    size_t g = 32 * wn, per = (cols + g - 1) / g, wr = 1;
    if (g > ctx->caps.max_wg)
        return 0;
    while (wr < per && wr < 32)
        wr <<= 1;
    if (wr < per)
        wr = (per + 31) / 32 * 32;
    if (wr > WARP_WR)
        return 0;
    /* each work-item's best: 2 kw at least among a warp's 32 wq (a tighter T
     * than kw; at most 4, and kw <= WARP_KMAX = 32 x 4) */
    size_t kw = (k + wn - 1) / wn;
    unsigned wq = (unsigned)((2 * kw + 31) / 32);
    wq = wq > 4 ? 4 : wq;
    size_t cap = c->wcap ? c->wcap : 8 * k > 512 ? 8 * k : 512;
    if (cap < g * wq)
        cap = g * wq;
    if (cap * 8 + g * (8 * (size_t)wq + 4) + 8 * wn + 64 > ctx->caps.local_mem)
        return 0;
    /* the window's untested loads: rows shorter than g wr columns, on GPUs
     * only (bits_params, BP_WWIN) */
    int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    unsigned win = gpu && cols != g * wr ? c->wwin : 0u;
    /* vectors: full rows of whole vectors (their starts are checked at the
     * launch) */
    unsigned vec = c->wvec && cols == g * wr && wr % 4 == 0;
    *w = (warp_cfg){.wn = (unsigned)wn, .wr = (unsigned)wr, .wq = wq, .wcap = (unsigned)cap,
                    .wwin = win, .wvec = vec,
                    .wone = c->wappend == 3 ? 0u
                            : c->wappend    ? c->wappend
                            : wn <= WAPPEND_WN ? 2u
                                               : 1u};
    w->lean = c->wlean && wq == 1 && wr <= 32 && w->wone;
    return 1;
}

/* whether the warp kernels may load this launch's rows by 16-byte vectors
 * (where their columns allow it, vec): every row's start a multiple of 4
 * elements (the buffer itself is aligned far more) */
static int warp_vec4(const cltopk_rows_job *job, const rows_launch_args *a, unsigned vec)
{
    return vec && a->in_off % 4 == 0 && (a->nrows < 2 || job->ld % 4 == 0);
}

/* the 11 arguments of the warp kernels (cl/rows_warp.cl, cl/rows_ws.cl):
 * the input, its offset, ld, cols, k, the direction, the outputs (the input
 * where not wanted), which are wanted, the first row's index base, and last
 * (rows_warp: the input's length in elements; rows_ws: the rows) */
static int warp_args(cltopk_context *ctx, cl_kernel kw, const cltopk_request *rq,
                     const cltopk_rows_job *job, const rows_launch_args *a, cl_ulong last)
{
    cl_uint k = (cl_uint)rq->k, sm = (cl_uint)rq->smallest, cols = (cl_uint)job->cols;
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    cl_mem ok = a->out_keys ? a->out_keys : a->in, oi = a->out_index ? a->out_index : a->in;
    cl_ulong off = (cl_ulong)a->in_off, ld = job->ld, ibase = job->ibase;
    return cltopk_set_args(ctx, kw, 11, sizeof(cl_mem), &a->in, sizeof off, &off, sizeof ld, &ld,
                           sizeof cols, &cols, sizeof k, &k, sizeof sm, &sm, sizeof(cl_mem), &ok,
                           sizeof(cl_mem), &oi, sizeof want, &want, sizeof ibase, &ibase,
                           sizeof last, &last);
}

static int warp_launch(cltopk_context *ctx, const cltopk_request *rq, const cltopk_rows_job *job,
                       const rows_launch_args *a, const warp_cfg *w, cl_uint num_wait,
                       const cl_event *wait)
{
    char opts[192];
    size_t g = 32 * (size_t)w->wn;
    /* WINV (output keys from their composites): on for one warp a row only.
     * The H200, three interleaved runs (ms, WINV 0 / 1): 16384 x 4096 k = 32
     * (4 warps) 0.129-0.133 / 0.145-0.148, 16384 x 2048 0.087-0.091 /
     * 0.093-0.096, 65536 x 1024 k = 16 (one warp) 0.167-0.171 / 0.149-0.155:
     * there WINV=0 took 127 registers, WINV=1 96 (bench/RESULTS.md) */
    int vec = warp_vec4(job, a, w->wvec);
    snprintf(opts, sizeof opts,
             "-D KEY_BITS=32 -D KEY_KIND=%d -D WN=%u -D WR=%u -D WQ=%u -D WCAP=%u -D WFULL=%d "
             "-D WWIN=%u -D WINV=%d -D WVEC=%d -D WONE=%u -D WLEAN=%u",
             rq->kind, w->wn, w->wr, w->wq, w->wcap, job->cols == (size_t)w->wr * g, w->wwin,
             w->wn == 1, vec, w->wone, w->lean);
    /* the input buffer's length in elements: the window's bound */
    size_t mem = 0;
    cl_int err = w->wwin ? clGetMemObjectInfo(a->in, CL_MEM_SIZE, sizeof mem, &mem, NULL)
                         : CL_SUCCESS;
    if (err != CL_SUCCESS)
        return cltopk_clfail(ctx, err, "clGetMemObjectInfo(CL_MEM_SIZE)");
    cl_kernel kw;
    int st = cltopk_kernel_get(ctx, "rows_warp.cl", opts, "rows_warp", &kw);
    if (st != CLTOPK_OK)
        return st;
    if ((st = warp_args(ctx, kw, rq, job, a, mem / 4)) == CLTOPK_OK)
        st = cltopk_launch(ctx, kw, a->nrows * g, g, num_wait, wait);
    clReleaseKernel(kw);
    return st;
}

/* ---------------------------------------------------------------------------
 * The streaming warp kernel (cl/rows_ws.cl): a row a warp, read once in
 * chunks of 128 columns, wsu of them in flight; the 32 best so far sorted
 * across the warp's lanes, candidates above the k-th of them appended to the
 * warp's buffer in local memory and merged 32 at a time.  32-bit keys, dense
 * rows, k up to wskmax (at most 32); where ws=2, on NVIDIA's platform only,
 * the rows the warp kernel does not take below SF_LONG columns, at least
 * wsrows rows a compute unit. */
typedef struct {
    unsigned wsu, wsg, wsp, vec, full;
} ws_cfg;

static int ws_fit(const cltopk_context *ctx, const cltopk_request *rq, const cltopk_rows_job *job,
                  const rows_cfg *c, ws_cfg *w)
{
    size_t k = rq->k, cols = job->cols;
    if (!c->ws || rq->bytes != 4 || k == 0 || k > c->wskmax || cols < k ||
        cols > ROWS_MAXLEN || 32 * (size_t)c->wsg > ctx->caps.max_wg ||
        (size_t)c->wsg * WS_BUF * 8 + 256 + 64 > ctx->caps.local_mem)
        return 0;
    if (c->ws == 2 && (!c->wsp || (c->warp && cols <= c->wcols && k <= c->wkmax) ||
                       cols >= SF_LONG ||
                       job->nrows < c->wsrows * (size_t)ctx->caps.compute_units))
        return 0;
    *w = (ws_cfg){.wsu = c->wsu, .wsg = c->wsg, .wsp = c->wsp, .vec = cols % 4 == 0,
                  .full = cols % 128 == 0};
    return 1;
}

static int ws_launch(cltopk_context *ctx, const cltopk_request *rq, const cltopk_rows_job *job,
                     const rows_launch_args *a, const ws_cfg *w, cl_uint num_wait,
                     const cl_event *wait)
{
    char opts[160];
    int vec = warp_vec4(job, a, w->vec);
    snprintf(opts, sizeof opts,
             "-D KEY_BITS=32 -D KEY_KIND=%d -D WSP=%u -D WSG=%u -D WSU=%u -D WSV=%d -D WSFULL=%u",
             rq->kind, w->wsp, w->wsg, w->wsu, vec, w->full);
    cl_kernel kw;
    int st = cltopk_kernel_get(ctx, "rows_ws.cl", opts, "rows_ws", &kw);
    if (st != CLTOPK_OK)
        return st;
    size_t g = 32 * (size_t)w->wsg, groups = (a->nrows + w->wsg - 1) / w->wsg;
    if ((st = warp_args(ctx, kw, rq, job, a, a->nrows)) == CLTOPK_OK)
        st = cltopk_launch(ctx, kw, groups * g, g, num_wait, wait);
    clReleaseKernel(kw);
    return st;
}

/* the compile options of cl/rows_tile.cl for t */
static void tile_opts(const cltopk_request *rq, const tile_cfg *t, char *opts, size_t len)
{
    snprintf(opts, len, "-D KEY_BITS=%d -D KEY_KIND=%d -D WG=%u -D RT=%u -D MCAP=%u -D PB=%u%s%s",
             rq->bytes * 8, rq->kind, t->wg, t->rt, t->mcap, t->pb,
             t->nomax ? " -D TILE_NOMAX=1" : "", t->mload ? " -D TILE_MLOAD=1" : "");
    if (t->shfl)
        snprintf(opts + strlen(opts), len - strlen(opts), " -D TILE_SHFL=%u", t->shfl);
    if (t->pre)
        snprintf(opts + strlen(opts), len - strlen(opts), " -D TILE_PRE=1");
}

/* dense rows by the register tile: one launch, or the parts and a merge */
static int tile_dense_launch(cltopk_context *ctx, const cltopk_request *rq,
                             const cltopk_rows_job *job, const rows_launch_args *a,
                             const tile_cfg *t, cl_uint num_wait, const cl_event *wait)
{
    char opts[256];
    tile_opts(rq, t, opts, sizeof opts);
    cl_kernel kt, km = NULL;
    int st = cltopk_kernel_get(ctx, "rows_tile.cl", opts, "rows_tile", &kt);
    if (st == CLTOPK_OK && t->parts > 1 &&
        (st = cltopk_kernel_get(ctx, "rows_tile.cl", opts, "rows_tile_merge", &km)) != CLTOPK_OK)
        clReleaseKernel(kt);
    if (st != CLTOPK_OK)
        return st;
    cl_uint k = (cl_uint)rq->k, sm = (cl_uint)rq->smallest, np = (cl_uint)t->parts;
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    cl_mem ok = a->out_keys ? a->out_keys : a->in, oi = a->out_index ? a->out_index : a->in;
    cl_mem cu = a->in, ci = a->in;
    cl_ulong off = (cl_ulong)a->in_off, ld = job->ld, cols = job->cols, plen = t->plen;
    cl_ulong ibase = job->ibase;
    if (t->parts > 1) {
        size_t ncand = a->nrows * t->parts * rq->k;
        if ((st = cltopk_scratch(ctx, SCR_CAND_U0, ncand * (size_t)rq->bytes, &cu)) ==
                CLTOPK_OK)
            st = cltopk_scratch(ctx, SCR_CAND_I0, ncand * 4, &ci);
    }
    if (st == CLTOPK_OK &&
        (st = cltopk_set_args(ctx, kt, 14, sizeof(cl_mem), &a->in, sizeof off, &off, sizeof ld,
                              &ld, sizeof cols, &cols, sizeof k, &k, sizeof sm, &sm, sizeof np,
                              &np, sizeof plen, &plen, sizeof(cl_mem), &ok, sizeof(cl_mem), &oi,
                              sizeof want, &want, sizeof ibase, &ibase, sizeof(cl_mem), &cu,
                              sizeof(cl_mem), &ci)) == CLTOPK_OK)
        st = cltopk_launch(ctx, kt, a->nrows * t->parts * t->wg, t->wg, num_wait, wait);
    if (st == CLTOPK_OK && km &&
        (st = cltopk_set_args(ctx, km, 11, sizeof(cl_mem), &a->in, sizeof off, &off, sizeof ld,
                              &ld, sizeof k, &k, sizeof np, &np, sizeof(cl_mem), &cu,
                              sizeof(cl_mem), &ci, sizeof(cl_mem), &ok, sizeof(cl_mem), &oi,
                              sizeof want, &want, sizeof ibase, &ibase)) == CLTOPK_OK)
        st = cltopk_launch(ctx, km, a->nrows * t->wg, t->wg, 0, NULL);
    clReleaseKernel(kt);
    if (km)
        clReleaseKernel(km);
    return st;
}

/* ---------------------------------------------------------------------------
 * The sample filter of long dense rows (cl/rows_tile.cl, rows_sf_*): a
 * threshold T a row from s samples of it, one read of every row by `parts`
 * groups a row keeping the elements at or above their row's T (at most cap
 * a row), and the exact top-k of those by the register tile, in the last
 * group of the row to finish; a row with fewer than k or more than cap
 * candidates is done exactly over all of it by that group instead.
 *
 * The sample and the rank (after the sample-filter query): with l = k s /
 * cols, rank = ceil(l + 5 sqrt(l) + 5), so that fewer than k candidates needs
 * rank samples among the k - 1 best of the row (a Poisson(l) tail past 5
 * sigma); about rank cols / s candidates are expected, and the buffer holds
 * (rank + 6 sqrt(rank) + 16) cols / s, at most a tile (wg x rt).  s doubles
 * (up to cols / 2 and a tile) while that bound exceeds a tile.  Taken in runs
 * of srun neighbours (8 on GPUs: a 32-byte sector of f32 a run), the samples
 * are as independent as the row's elements are (any order of independent
 * values); where neighbours are alike (sorted or clustered rows) the s /
 * srun strata still spread them over the row, and a row outside the bounds
 * is done exactly over all of it anyway: the answer never depends on them.
 *
 * The model of path=auto (GPUs only, and only where the register tile does
 * not take the call, i.e. where the streaming kernel ran before): the sample
 * filter costs one read R of the rows at about 1.15 R (the sample-filter
 * measurement of one array on the H200: 1.04-1.13x the floor for the filter
 * read), plus its sample, s / srun scattered 32-byte sectors a row, plus its
 * candidates written and read again (16 bytes each), plus two launches;
 * the streaming kernel measured 7.0 R on the H200 at 1024 x 65536, k = 256.
 * It is taken where the sample and the candidates add at most one read:
 * (32 s / srun + 16 rank cols / s) <= cols x key bytes (SF_EXTRA).  At 1024 x 65536
 * f32, k = 256: s = 1024, rank = 19, 1216 candidates a row: 0.20 R, predicted
 * 1.4-1.8 R in all (0.11-0.14 ms against 0.544).  Measured on the H200: 0.218
 * ms = 2.8 R (later, with fuse=0: the sample 33 us, the filter 98 us = 1.27
 * R, the finish 65 us; then, with the sample in runs of 8 and the finish by
 * radix passes (fmax): 14.5 / 97 / 45 us, 0.160-0.165 ms = 2.1 R); rows of
 * SF_LONG columns and more take it before the
 * register tile too.  The bound was half a read until the H200 measured the
 * sample filter 2.6-2.7x faster than the streaming kernel at 0.61-0.66 R of
 * extra (1024 x 65536 k = 1024: 0.33-0.35 ms against 0.91; 4096 x 16384 k =
 * 256: 0.42 against 1.09). */
#define SF_EXTRA 1.0
#define SF_WORDS 8 /* state words a row (cl/rows_tile.cl SF_W) */

typedef struct {
    tile_cfg t;
    tile_cfg tf; /* the finish's tile (fuse=0; else t) */
    unsigned s, rank, force, check, fuse, srun, sfull, sfunr;
    int doubled; /* auto chose twice the configured work-items (sf_plan) */
    size_t cap, parts, plen;
    double extra; /* the sample's and the candidates' bytes over a read (the model) */
} rowsf_cfg;

/* the sample filter for the dense job at k: 1 (f filled; auto: its model
 * chose it), or 0 with the reason in why */
static int sf_plan(const cltopk_context *ctx, const cltopk_request *rq,
                   const cltopk_rows_job *job, const rows_cfg *c, rowsf_cfg *f, char *why,
                   size_t whylen)
{
    int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    size_t k = rq->k, cols = job->cols, tl = (size_t)c->wg * c->rt;
    memset(f, 0, sizeof *f);
    /* the finish's tile: the filter's where it finishes the rows (fuse=1) */
    unsigned fwg = !c->fuse && c->fwg ? c->fwg : c->wg, frt = !c->fuse && c->frt ? c->frt : c->rt;
    size_t tlf = (size_t)fwg * frt;
    if (job->mode != ROWS_DENSE || c->path == BPATH_NOSF) {
        snprintf(why, whylen, "%s", job->mode != ROWS_DENSE ? "dense rows only"
                                                             : "CLTOPK_BITS=path=nosf");
        return 0;
    }
    if (c->path == BPATH_AUTO && !gpu) {
        snprintf(why, whylen, "auto takes it on GPUs only");
        return 0;
    }
    tile_cfg t;
    if (c->path == BPATH_AUTO && tile_dense(ctx, rq, job, c, &t) && cols < SF_LONG) {
        snprintf(why, whylen, "the register tile takes k up to %zu below %d columns", c->tkmax,
                 SF_LONG);
        return 0;
    }
    if (k == 0 || k > TILE_KMAX || 2 * k > tl || 2 * k > tlf || c->wg < 16) {
        size_t h = (tl < tlf ? tl : tlf) / 2;
        snprintf(why, whylen, "k = %zu above %zu (half the tile, at most %d)", k,
                 h < TILE_KMAX ? h : (size_t)TILE_KMAX, TILE_KMAX);
        return 0;
    }
    if (cols > 0x7FFFFFFEu) {
        snprintf(why, whylen, "rows of fewer than 2^31 - 1 elements");
        return 0;
    }
    unsigned pb = cols - 1 <= 65534 ? 16 : 31, mcap = 2048;
    if ((size_t)mcap * ((size_t)rq->bytes + 4) + 2048 > ctx->caps.local_mem) {
        snprintf(why, whylen, "the tile's %u pairs do not fit local memory", mcap);
        return 0;
    }
    f->t = (tile_cfg){.wg = c->wg, .rt = c->rt, .mcap = mcap, .pb = pb, .nomax = !c->maxima,
                      .mload = c->tmload, .parts = 1, .plen = tl};
    f->tf = f->t;
    f->tf.wg = fwg;
    f->tf.rt = frt;
    f->tf.plen = tlf;
    /* the finish's sort by shuffles (its program: the filter's too where
     * the filter finishes the rows, fuse=1) */
    f->tf.shfl = c->shfl;
    f->tf.pre = c->fpre;
    if (c->fuse) {
        f->t.shfl = c->shfl;
        f->t.pre = c->fpre;
    }
    /* the finish's threshold of the maxima: fmax 1 always (the default on
     * CPU devices, where fuse=1 anyway), 0 never, 2 (the GPU default) where
     * k is at most a quarter of its work-items.  Its
     * candidates lie in the first slots, a few a work-item, so that the k-th
     * of the work-items' maxima gathers most of them at larger k (H200, 1024
     * x 65536: at k = 256 45 us without it against 68 with it; at k = 32
     * 0.125-0.129 ms with it against 0.129-0.134 without) */
    if (!c->fuse && (c->fmax == 0 || (c->fmax == 2 && 4 * k > fwg)))
        f->tf.nomax = 1;
    /* the sample */
    size_t smax = cols / 2 < tl ? cols / 2 : tl;
    size_t s = c->s ? c->s : gpu ? 1024 : 256;
    if (s > smax)
        s = smax;
    double bound = 0, r = 0;
    for (;;) {
        double l = (double)k * (double)s / (double)cols;
        r = ceil(l + 5.0 * sqrt(l) + 5.0);
        bound = s ? (r + 6.0 * sqrt(r) + 16.0) * (double)cols / (double)s : (double)cols;
        if (c->s || s == 0 || bound <= (double)tlf || 2 * s > smax)
            break;
        s *= 2;
    }
    int sampled = s >= 1 && r <= (double)s && r <= (double)(mcap / 2);
    f->s = sampled ? (unsigned)s : 0;
    f->rank = sampled ? (unsigned)r : 0;
    if (!sampled)
        bound = (double)cols; /* T below everything */
    f->force = c->force;
    f->fuse = c->fuse;
    f->check = c->check;
    /* runs of srun neighbours: s a multiple of srun, strata of at least srun */
    f->srun = c->srun;
    while (f->srun > 1 && (f->s == 0 || f->s % f->srun || cols / (f->s / f->srun) < f->srun))
        f->srun >>= 1;
    f->sfull = c->sfull;
    f->sfunr = c->sfunr;
    f->cap = c->sfcap ? c->sfcap : bound < (double)cols ? (size_t)ceil(bound) : cols;
    /* a multiple of 32, so that no two rows' candidates share a 128-byte
     * line: the last group of a row reads what other groups wrote, and a
     * line cached by its multiprocessor for the row before could be stale */
    f->cap = (f->cap + 31) / 32 * 32;
    if (f->cap > tlf)
        f->cap = tlf;
    double cand = f->s ? (double)f->rank * (double)cols / (double)f->s : (double)cols;
    f->extra = (32.0 * (double)f->s / f->srun + 16.0 * cand) / ((double)cols * (double)rq->bytes);
    /* a group's part: on GPUs 64 KiB of f32, so that its tail (two global
     * atomics and a fence, 2-3 us) is short beside its read */
    size_t plen = c->sfpart ? c->sfpart : gpu ? 16384 : 2048;
    plen = (plen + 3) / 4 * 4;
    f->parts = (cols + plen - 1) / plen;
    f->plen = plen;
    if (job->nrows > (size_t)ctx->caps.max_alloc / 8 / f->cap) {
        snprintf(why, whylen, "the candidates of %zu rows exceed one allocation", job->nrows);
        return 0;
    }
    if (c->path == BPATH_AUTO && sampled && bound > (double)tlf && !c->wg_set &&
        2u * c->wg <= 1024u && 2u * c->wg <= ctx->caps.max_wg) {
        /* the candidates' bound past the tile: a tile of twice the
         * work-items (H200, 256 x 262144 at k = 1024: 0.190-0.196 ms with
         * 512 against 0.893-0.896 by the streaming kernel; where the tile
         * holds the bound, 256 measured faster), if the device builds and
         * launches the kernels at that size (sf_launch) */
        rows_cfg c2 = *c;
        c2.wg *= 2u;
        int r2 = sf_plan(ctx, rq, job, &c2, f, why, whylen);
        f->doubled = 1;
        return r2;
    }
    if (c->path == BPATH_AUTO && (!sampled || bound > (double)tlf || f->extra > SF_EXTRA)) {
        snprintf(why, whylen, "the model: the sample and candidates would add %.2f of a read "
                 "(at most %.1f), or the candidates (%.0f) exceed a tile (%zu)", f->extra,
                 SF_EXTRA, bound, tlf);
        return 0;
    }
    return 1;
}

/* CLTOPK_BITS=check=served|fallback: wait for the call and read every row's way */
static int sf_check(cltopk_context *ctx, const rowsf_cfg *f, cl_mem state, size_t nrows)
{
    cl_uint *w = malloc(nrows * SF_WORDS * sizeof *w);
    if (!w)
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "CLTOPK_BITS check: out of host memory");
    cl_event *own;
    cl_uint nown = cltopk_after_own(ctx, &own);
    cl_int err = clEnqueueReadBuffer(ctx->queue, state, CL_TRUE, 0,
                                     nrows * SF_WORDS * sizeof *w, w, nown, own, NULL);
    int st = CLTOPK_OK;
    if (err != CL_SUCCESS)
        st = cltopk_clfail(ctx, err, "CLTOPK_BITS check: reading the rows' state");
    for (size_t r = 0; r < nrows && st == CLTOPK_OK; r++) {
        cl_uint path = w[r * SF_WORDS + 5], count = w[r * SF_WORDS + 3];
        int served = path == 1;
        if (path == 0 || served != (f->check == BCHECK_SERVED))
            st = cltopk_fail(ctx, CLTOPK_ERR_INTERNAL,
                             "CLTOPK_BITS check=%s: row %zu %s (%u candidates, buffer %zu, "
                             "sample %u, rank %u)", f->check == BCHECK_SERVED ? "served"
                                                                               : "fallback",
                             r, path == 0 ? "was not finished" : served
                                                ? "was served by its candidates"
                                                : path == 2 ? "fell back (too few)"
                                                            : "fell back (too many)",
                             count, f->cap, f->s, f->rank);
    }
    free(w);
    return st;
}

/* dense rows by the sample filter: two launches (three with fuse=0) */
static int sf_launch(cltopk_context *ctx, const cltopk_request *rq, const cltopk_rows_job *job,
                     const rows_launch_args *a, const rowsf_cfg *f, cl_uint num_wait,
                     const cl_event *wait, int *cannot)
{
    *cannot = 0;
    char opts[256], sopts[256], fopts[256];
    int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    tile_opts(rq, &f->t, opts, sizeof opts);
    /* the sample's own tile on GPUs: the fewest slots a work-item that hold
     * the sample (4 for 1024 samples of 256 work-items, against the 16 the
     * candidates need), fewer registers and shorter loops; elsewhere the
     * tile's program serves (one program fewer to build) */
    tile_cfg ts = f->t;
    if (gpu) {
        ts.rt = 1;
        while ((size_t)ts.wg * ts.rt < f->s && ts.rt < f->t.rt)
            ts.rt <<= 1;
    }
    tile_opts(rq, &ts, sopts, sizeof sopts);
    if (f->srun > 1)
        snprintf(sopts + strlen(sopts), sizeof sopts - strlen(sopts), " -D SF_SRUN=%u", f->srun);
    /* the finish's program (fuse=0): the filter's unless its tile differs */
    tile_opts(rq, &f->tf, fopts, sizeof fopts);
    /* the filter's options, the finish's too: vectors a filtering work-item
     * loads a round (sfunr; the kernel's default 4 adds no option, so that
     * the tile's program serves), the finish apart, the whole rounds */
    char unr[32] = "", sfx[96];
    if (f->sfunr != 4)
        snprintf(unr, sizeof unr, " -D SF_UNR=%u", f->sfunr);
    snprintf(sfx, sizeof sfx, "%s%s%s", unr, f->fuse ? "" : " -D SF_APART=1",
             f->sfull ? " -D SF_FULL=1" : "");
    snprintf(opts + strlen(opts), sizeof opts - strlen(opts), "%s", sfx);
    snprintf(fopts + strlen(fopts), sizeof fopts - strlen(fopts), "%s", sfx);
    cl_kernel ks = NULL, kf = NULL, kd = NULL;
    cl_mem state, cu, ci;
    size_t n = a->nrows;
    int st = cltopk_kernel_get(ctx, "rows_tile.cl", sopts, "rows_sf_sample", &ks);
    if (st == CLTOPK_OK)
        st = cltopk_kernel_get(ctx, "rows_tile.cl", opts, "rows_sf_filter", &kf);
    if (st == CLTOPK_OK && !f->fuse)
        st = cltopk_kernel_get(ctx, "rows_tile.cl", fopts, "rows_sf_finish", &kd);
    if (st == CLTOPK_OK)
        st = cltopk_scratch(ctx, SCR_ROWS_SF, n * SF_WORDS * 4, &state);
    if (st == CLTOPK_OK)
        st = cltopk_scratch(ctx, SCR_CAND_U0, n * f->cap * (size_t)rq->bytes, &cu);
    if (st == CLTOPK_OK)
        st = cltopk_scratch(ctx, SCR_CAND_I0, n * f->cap * 4, &ci);
    cl_uint k = (cl_uint)rq->k, sm = (cl_uint)rq->smallest, s = f->s, rank = f->rank;
    cl_uint force = f->force, parts = (cl_uint)f->parts, cap = (cl_uint)f->cap;
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    cl_mem ok = a->out_keys ? a->out_keys : a->in, oi = a->out_index ? a->out_index : a->in;
    cl_ulong off = (cl_ulong)a->in_off, ld = job->ld, cols = job->cols, plen = f->plen;
    cl_ulong ibase = job->ibase, seed = cltopk_fresh_seed(ctx);
    if (st == CLTOPK_OK &&
        (st = cltopk_set_args(ctx, ks, 10, sizeof(cl_mem), &a->in, sizeof off, &off, sizeof ld,
                              &ld, sizeof cols, &cols, sizeof sm, &sm, sizeof s, &s,
                              sizeof rank, &rank, sizeof seed, &seed, sizeof force, &force,
                              sizeof(cl_mem), &state)) == CLTOPK_OK)
        st = cltopk_launch(ctx, ks, n * f->t.wg, f->t.wg, num_wait, wait);
    if (st == CLTOPK_OK &&
        (st = cltopk_set_args(ctx, kf, 16, sizeof(cl_mem), &a->in, sizeof off, &off, sizeof ld,
                              &ld, sizeof cols, &cols, sizeof k, &k, sizeof sm, &sm,
                              sizeof parts, &parts, sizeof plen, &plen, sizeof cap, &cap,
                              sizeof(cl_mem), &state, sizeof(cl_mem), &cu, sizeof(cl_mem), &ci,
                              sizeof(cl_mem), &ok, sizeof(cl_mem), &oi, sizeof want, &want,
                              sizeof ibase, &ibase)) == CLTOPK_OK)
        st = cltopk_launch(ctx, kf, n * f->parts * f->t.wg, f->t.wg, 0, NULL);
    if (st == CLTOPK_OK && kd &&
        (st = cltopk_set_args(ctx, kd, 14, sizeof(cl_mem), &a->in, sizeof off, &off, sizeof ld,
                              &ld, sizeof cols, &cols, sizeof k, &k, sizeof sm, &sm,
                              sizeof cap, &cap, sizeof(cl_mem), &state, sizeof(cl_mem), &cu,
                              sizeof(cl_mem), &ci, sizeof(cl_mem), &ok, sizeof(cl_mem), &oi,
                              sizeof want, &want, sizeof ibase, &ibase)) == CLTOPK_OK)
        st = cltopk_launch(ctx, kd, n * f->tf.wg, f->tf.wg, 0, NULL);
    /* auto's doubled work-groups that the device did not build or launch
     * (some report a smaller CL_KERNEL_WORK_GROUP_SIZE than they run: the
     * H200 says 256 of kernels it runs at 512): no output written yet (the
     * finish is the last launch, the filter's fused finish the first to
     * write one), so the caller takes another way */
    if (st != CLTOPK_OK && f->doubled)
        *cannot = 1;
    if (ks)
        clReleaseKernel(ks);
    if (kf)
        clReleaseKernel(kf);
    if (kd)
        clReleaseKernel(kd);
    if (st == CLTOPK_OK && f->check != BCHECK_NONE)
        st = sf_check(ctx, f, state, n);
    return st;
}

/* the classes of segments by length: at most ROWS_SHORT a work-item each
 * (rows_segments_short); up to a small register tile (32 work-items) and up
 * to a large one (c->wg), a group each by the tile; longer ones split into
 * parts of a large tile, a group each, whose best k are merged by a group a
 * segment (where the parts' candidates fit a tile: SEG_SPLIT); the rest a
 * group each by rows_segments.  A class the tile cannot take goes to the
 * longer one. */
enum { SEG_LONG, SEG_SPLIT, SEG_TBIG, SEG_TSMALL, SEG_SHORT, SEG_CLASSES };
typedef struct {
    size_t count[SEG_CLASSES];
    tile_cfg tile[SEG_CLASSES]; /* SEG_SPLIT, SEG_TBIG, SEG_TSMALL */
    size_t upto[SEG_CLASSES];   /* the longest segment of the class */
    size_t parts;               /* SEG_SPLIT: the parts of all its segments */
} seg_plan;

static int seg_class(const seg_plan *p, size_t len)
{
    if (len <= ROWS_SHORT)
        return SEG_SHORT;
    if (p->upto[SEG_TSMALL] && len <= p->upto[SEG_TSMALL])
        return SEG_TSMALL;
    if (p->upto[SEG_TBIG] && len <= p->upto[SEG_TBIG])
        return SEG_TBIG;
    if (p->upto[SEG_SPLIT] && len <= p->upto[SEG_SPLIT])
        return SEG_SPLIT;
    return SEG_LONG;
}

static void seg_planning(const cltopk_context *ctx, const cltopk_request *rq, const rows_cfg *c,
                         const int64_t *offs, size_t n, seg_plan *p)
{
    memset(p, 0, sizeof *p);
    size_t small = (size_t)32 * c->rt, big = (size_t)c->wg * c->rt;
    if (small < big && tile_fit(ctx, rq, c, rq->k, small, small - 1, &p->tile[SEG_TSMALL]))
        p->upto[SEG_TSMALL] = small;
    if (tile_fit(ctx, rq, c, rq->k, big, big - 1, &p->tile[SEG_TBIG]))
        p->upto[SEG_TBIG] = big;
    /* split: at most big / k parts of big elements (the merge holds them),
     * positions within the segment up to 2^31 - 2 */
    size_t most = p->upto[SEG_TBIG] && rq->k ? big / rq->k * big : 0;
    if (most > 0x7FFFFFFEu)
        most = 0x7FFFFFFEu;
    if (most > big && tile_fit(ctx, rq, c, rq->k, big, most - 1, &p->tile[SEG_SPLIT]))
        p->upto[SEG_SPLIT] = most;
    size_t count[SEG_CLASSES] = {0}, parts = 0;
    const size_t m = n <= 0xFFFFFFFFu ? n : 0;
#pragma omp parallel for reduction(+ : count[:SEG_CLASSES], parts) schedule(static) \
    if (m > 65536)
    for (size_t s = 0; s < m; s++) {
        size_t len = (size_t)(offs[s + 1] - offs[s]);
        int cl = seg_class(p, len);
        count[cl]++;
        if (cl == SEG_SPLIT)
            parts += (len + big - 1) / big;
    }
    if (m < n) /* more segments than 32-bit ids: all by rows_segments */
        count[SEG_LONG] = n;
    memcpy(p->count, count, sizeof count);
    p->parts = parts;
}

/* the ids of the segments of every class but SEG_SHORT into h, class c from
 * first[c], each class in increasing order: threads take equal ranges of
 * segments, count their classes, then write from their offsets (the same
 * list as one thread's pass) */
static void seg_list(const seg_plan *p, const int64_t *offs, size_t n, const size_t *first,
                     cl_uint *h)
{
    enum { MAXT = 64 };
    size_t cnt[MAXT][SEG_CLASSES];
    int want = 1;
#ifdef _OPENMP
    want = n > 65536 ? omp_get_max_threads() : 1;
    if (want > MAXT)
        want = MAXT;
#endif
#pragma omp parallel num_threads(want)
    {
        int t = 0, nt = 1;
#ifdef _OPENMP
        t = omp_get_thread_num();
        nt = omp_get_num_threads();
#endif
        const size_t lo = n * (size_t)t / (size_t)nt, hi = n * (size_t)(t + 1) / (size_t)nt;
        size_t mine[SEG_CLASSES] = {0};
        for (size_t s = lo; s < hi; s++)
            mine[seg_class(p, (size_t)(offs[s + 1] - offs[s]))]++;
        memcpy(cnt[t], mine, sizeof mine);
#pragma omp barrier
        size_t at[SEG_CLASSES];
        for (int c = 0; c < SEG_CLASSES; c++) {
            at[c] = first[c];
            for (int u = 0; u < t; u++)
                at[c] += cnt[u][c];
        }
        for (size_t s = lo; s < hi; s++) {
            int cl = seg_class(p, (size_t)(offs[s + 1] - offs[s]));
            if (cl != SEG_SHORT)
                h[at[cl]++] = (cl_uint)s;
        }
    }
}

/* the split segments (their ids in sids): parts of wg x rt elements a group
 * each (their best k to the candidates), then a group a segment over its
 * parts' candidates */
static int split_launch(cltopk_context *ctx, const cltopk_request *rq,
                        const rows_launch_args *a, const seg_plan *p, const cl_uint *sids,
                        cl_uint num_wait, const cl_event *wait)
{
    const tile_cfg *t = &p->tile[SEG_SPLIT];
    size_t big = (size_t)t->wg * t->rt, P = p->parts, H = p->count[SEG_SPLIT];
    /* one list: the parts' segments and first elements, then the segments,
     * their first candidate and their parts */
    cl_uint *h = malloc((2 * P + 3 * H) * sizeof *h);
    if (!h)
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for %zu parts", P);
    size_t pi = 0, hi = 0;
    for (size_t i = 0; i < H; i++) {
        const size_t s = sids[i];
        size_t len = (size_t)(a->hoffs[s + 1] - a->hoffs[s]);
        size_t np = (len + big - 1) / big;
        h[2 * P + hi] = (cl_uint)s;
        h[2 * P + H + hi] = (cl_uint)(pi * rq->k);
        h[2 * P + 2 * H + hi] = (cl_uint)np;
        hi++;
        for (size_t q = 0; q < np; q++, pi++) {
            h[pi] = (cl_uint)s;
            h[P + pi] = (cl_uint)(q * big);
        }
    }
    cl_mem list;
    int st = rows_host_copy(ctx, SCR_ROWS_SPLIT, h, (2 * P + 3 * H) * sizeof *h,
                            "clEnqueueWriteBuffer (the parts of long segments)", &list);
    free(h);
    if (st != CLTOPK_OK)
        return st;
    char topts[256];
    tile_opts(rq, t, topts, sizeof topts);
    cl_kernel kp = NULL, km = NULL;
    cl_mem cu, ci;
    st = cltopk_kernel_get(ctx, "rows_tile.cl", topts, "rows_tile_segpart", &kp);
    if (st == CLTOPK_OK)
        st = cltopk_kernel_get(ctx, "rows_tile.cl", topts, "rows_tile_segmerge", &km);
    if (st == CLTOPK_OK &&
        (st = cltopk_scratch(ctx, SCR_CAND_U0, P * rq->k * (size_t)rq->bytes, &cu)) ==
            CLTOPK_OK)
        st = cltopk_scratch(ctx, SCR_CAND_I0, P * rq->k * 4, &ci);
    cl_uint k = (cl_uint)rq->k, sm = (cl_uint)rq->smallest, cP = (cl_uint)P, cH = (cl_uint)H;
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    cl_mem ok = a->out_keys ? a->out_keys : a->in, oi = a->out_index ? a->out_index : a->in;
    cl_long off = (cl_long)a->in_off;
    if (st == CLTOPK_OK &&
        (st = cltopk_set_args(ctx, kp, 9, sizeof(cl_mem), &a->in, sizeof off, &off,
                              sizeof(cl_mem), &a->offs, sizeof(cl_mem), &list, sizeof cP, &cP,
                              sizeof k, &k, sizeof sm, &sm, sizeof(cl_mem), &cu,
                              sizeof(cl_mem), &ci)) == CLTOPK_OK)
        st = cltopk_launch(ctx, kp, P * t->wg, t->wg, num_wait, wait);
    if (st == CLTOPK_OK &&
        (st = cltopk_set_args(ctx, km, 12, sizeof(cl_mem), &a->in, sizeof off, &off,
                              sizeof(cl_mem), &a->offs, sizeof(cl_mem), &list, sizeof cP, &cP,
                              sizeof cH, &cH, sizeof k, &k, sizeof(cl_mem), &cu, sizeof(cl_mem),
                              &ci, sizeof(cl_mem), &ok, sizeof(cl_mem), &oi, sizeof want,
                              &want)) == CLTOPK_OK)
        st = cltopk_launch(ctx, km, H * t->wg, t->wg, 0, NULL);
    if (kp)
        clReleaseKernel(kp);
    if (km)
        clReleaseKernel(km);
    return st;
}

/* segments by the classes above; kern is rows_segments */
static int segments_launch(cltopk_context *ctx, const cltopk_request *rq,
                           const rows_launch_args *a, const rows_cfg *c, const char *opts,
                           cl_kernel kern, cl_uint num_wait, const cl_event *wait)
{
    size_t n = a->nrows;
    seg_plan p;
    seg_planning(ctx, rq, c, a->hoffs, n, &p);
    /* the ids of the segments of the group kernels go in a list, class by
     * class (SEG_SHORT, the last class, needs none: its kernel takes every
     * segment and skips the longer ones) */
    size_t nlist = n - p.count[SEG_SHORT];
    int listed = nlist > 0 && p.count[SEG_LONG] < n;
    size_t first[SEG_CLASSES];
    first[0] = 0;
    for (int i = 1; i < SEG_CLASSES; i++)
        first[i] = first[i - 1] + p.count[i - 1];
    cl_mem ids = a->in; /* unused without a list */
    cl_uint *hlist = NULL; /* the list on the host (the split class's ids) */
    int st = CLTOPK_OK;
    if (listed) {
        cl_uint *h = malloc(nlist * sizeof *h);
        if (!h)
            return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for %zu segment "
                               "ids", nlist);
        seg_list(&p, a->hoffs, n, first, h);
        st = rows_host_copy(ctx, SCR_ROWS_IDS, h, nlist * sizeof *h,
                            "clEnqueueWriteBuffer (segment ids)", &ids);
        if (st != CLTOPK_OK) {
            free(h);
            return st;
        }
        hlist = h;
    }
    cl_uint k = (cl_uint)rq->k, sm = (cl_uint)rq->smallest, use_ids = listed;
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    cl_mem ok = a->out_keys ? a->out_keys : a->in, oi = a->out_index ? a->out_index : a->in;
    cl_long off = (cl_long)a->in_off;
    cl_ulong ibase = 0;
    if (p.count[SEG_LONG]) {
        st = cltopk_set_args(ctx, kern, 11, sizeof(cl_mem), &a->in, sizeof off, &off,
                             sizeof(cl_mem), &a->offs, sizeof(cl_mem), &ids, sizeof use_ids,
                             &use_ids, sizeof k, &k, sizeof sm, &sm, sizeof(cl_mem), &ok,
                             sizeof(cl_mem), &oi, sizeof want, &want, sizeof ibase, &ibase);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kern, p.count[SEG_LONG] * c->wg, c->wg, num_wait, wait);
        num_wait = 0, wait = NULL; /* the next launch follows this one */
    }
    if (st == CLTOPK_OK && p.count[SEG_SPLIT]) {
        st = split_launch(ctx, rq, a, &p, hlist + first[SEG_SPLIT], num_wait, wait);
        num_wait = 0, wait = NULL;
    }
    for (int cl = SEG_TBIG; st == CLTOPK_OK && cl <= SEG_TSMALL; cl++) {
        if (!p.count[cl])
            continue;
        const tile_cfg *t = &p.tile[cl];
        char topts[256];
        tile_opts(rq, t, topts, sizeof topts);
        cl_kernel kt;
        cl_uint id0 = (cl_uint)first[cl];
        if ((st = cltopk_kernel_get(ctx, "rows_tile.cl", topts, "rows_tile_seg", &kt)) !=
            CLTOPK_OK)
            break;
        st = cltopk_set_args(ctx, kt, 11, sizeof(cl_mem), &a->in, sizeof off, &off,
                             sizeof(cl_mem), &a->offs, sizeof(cl_mem), &ids, sizeof id0, &id0,
                             sizeof k, &k, sizeof sm, &sm, sizeof(cl_mem), &ok, sizeof(cl_mem),
                             &oi, sizeof want, &want, sizeof ibase, &ibase);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kt, p.count[cl] * t->wg, t->wg, num_wait, wait);
        num_wait = 0, wait = NULL;
        clReleaseKernel(kt);
    }
    if (st == CLTOPK_OK && p.count[SEG_SHORT]) {
        cl_kernel ks;
        cl_ulong nseg = n;
        size_t local = c->wg < 64 ? c->wg : 64;
        if ((st = cltopk_kernel_get(ctx, "rows.cl", opts, "rows_segments_short", &ks)) ==
            CLTOPK_OK) {
            st = cltopk_set_args(ctx, ks, 10, sizeof(cl_mem), &a->in, sizeof off, &off,
                                 sizeof(cl_mem), &a->offs, sizeof nseg, &nseg, sizeof k, &k,
                                 sizeof sm, &sm, sizeof(cl_mem), &ok, sizeof(cl_mem), &oi,
                                 sizeof want, &want, sizeof ibase, &ibase);
            if (st == CLTOPK_OK)
                st = cltopk_launch(ctx, ks, (n + local - 1) / local * local, local, num_wait,
                                   wait);
            clReleaseKernel(ks);
        }
    }
    free(hlist);
    return st;
}

static int rows_launch(cltopk_context *ctx, const cltopk_request *rq, const cltopk_rows_job *job,
                       const rows_launch_args *a, cl_uint num_wait, const cl_event *wait)
{
    rows_cfg c;
    char why[256];
    if (!rows_config(ctx, rq, rq->k, &c, why, sizeof why))
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "bits: %s", why);
    static const char *names[3] = {"rows_dense", "rows_segments", "rows_knn"};
    char opts[256];
    snprintf(opts, sizeof opts,
             "-D KEY_BITS=%d -D KEY_KIND=%d -D MODE=%d -D METRIC=%d -D WG=%u -D R=%u "
             "-D KTOP=%u -D CAP=%u",
             rq->bytes * 8, rq->kind, job->mode, job->mode == ROWS_KNN ? job->metric : 0, c.wg,
             c.r, c.ktop, c.cap);
    if (job->mode == ROWS_SEGMENTS)
        snprintf(opts + strlen(opts), sizeof opts - strlen(opts), " -D SHORT=%d -D SHORT_WG=%u",
                 ROWS_SHORT, c.wg < 64 ? c.wg : 64);
    tile_cfg t;
    rowsf_cfg f;
    if (job->mode == ROWS_DENSE && sf_plan(ctx, rq, job, &c, &f, why, sizeof why)) {
        int cannot, st = sf_launch(ctx, rq, job, a, &f, num_wait, wait, &cannot);
        if (!cannot)
            return st;
        snprintf(why, sizeof why, "the device did not launch its kernels at %u work-items",
                 f.t.wg);
        ctx->err[0] = 0; /* recovered: a successful call leaves no detail text */
    }
    if (job->mode == ROWS_DENSE && c.check != BCHECK_NONE)
        return cltopk_fail(ctx, CLTOPK_ERR_INTERNAL, "CLTOPK_BITS check: the sample filter "
                           "did not run: %s", why);
    ws_cfg ws;
    if (job->mode == ROWS_DENSE && ws_fit(ctx, rq, job, &c, &ws))
        return ws_launch(ctx, rq, job, a, &ws, num_wait, wait);
    warp_cfg w;
    if (job->mode == ROWS_DENSE && warp_fit(ctx, rq, job, &c, &w))
        return warp_launch(ctx, rq, job, a, &w, num_wait, wait);
    if (job->mode == ROWS_DENSE && tile_dense(ctx, rq, job, &c, &t))
        return tile_dense_launch(ctx, rq, job, a, &t, num_wait, wait);
    if (job->mode == ROWS_KNN) {
        /* the distance tiles (knndev.c), where they run */
        cltopk_knn_launch kl = {.q = a->q, .p = a->in, .out_dist = a->out_keys,
                                .out_index = a->out_index, .q_off = a->q_off,
                                .p_off = (size_t)a->in_off, .nq = a->nrows};
        int done, st = cltopk_knn_dev_run(ctx, rq, job, opts, c.wg, &kl, num_wait, wait, &done);
        if (st != CLTOPK_OK || done)
            return st;
    }
    size_t parts = job->mode == ROWS_DENSE ? dense_parts(ctx, job, &c) : 1;
    cl_kernel kern, kpart = NULL;
    int st = cltopk_kernel_get(ctx, "rows.cl", opts, parts > 1 ? "rows_dense_merge"
                                                                : names[job->mode], &kern);
    if (st == CLTOPK_OK && parts > 1 &&
        (st = cltopk_kernel_get(ctx, "rows.cl", opts, "rows_dense_part", &kpart)) != CLTOPK_OK)
        clReleaseKernel(kern);
    if (st != CLTOPK_OK)
        return st;
    cl_uint k = (cl_uint)rq->k, sm = (cl_uint)rq->smallest;
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    cl_mem ok = a->out_keys ? a->out_keys : a->in, oi = a->out_index ? a->out_index : a->in;
    cl_ulong ibase = job->ibase;
    if (parts > 1) {
        /* each part's best k pairs, then a group a row over them */
        cl_ulong off = (cl_ulong)a->in_off, ld = job->ld, cols = job->cols;
        cl_ulong plen = (job->cols + parts - 1) / parts;
        cl_uint np = (cl_uint)parts;
        size_t ncand = a->nrows * parts * rq->k;
        cl_mem cu, ci;
        if ((st = cltopk_scratch(ctx, SCR_CAND_U0, ncand * (size_t)rq->bytes, &cu)) ==
                CLTOPK_OK &&
            (st = cltopk_scratch(ctx, SCR_CAND_I0, ncand * 4, &ci)) == CLTOPK_OK &&
            (st = cltopk_set_args(ctx, kpart, 10, sizeof(cl_mem), &a->in, sizeof off, &off,
                                  sizeof ld, &ld, sizeof cols, &cols, sizeof k, &k, sizeof sm,
                                  &sm, sizeof np, &np, sizeof plen, &plen, sizeof(cl_mem), &cu,
                                  sizeof(cl_mem), &ci)) == CLTOPK_OK &&
            (st = cltopk_launch(ctx, kpart, a->nrows * parts * c.wg, c.wg, num_wait, wait)) ==
                CLTOPK_OK &&
            (st = cltopk_set_args(ctx, kern, 11, sizeof(cl_mem), &a->in, sizeof off, &off,
                                  sizeof ld, &ld, sizeof k, &k, sizeof np, &np, sizeof(cl_mem),
                                  &cu, sizeof(cl_mem), &ci, sizeof(cl_mem), &ok, sizeof(cl_mem),
                                  &oi, sizeof want, &want, sizeof ibase, &ibase)) == CLTOPK_OK)
            st = cltopk_launch(ctx, kern, a->nrows * c.wg, c.wg, 0, NULL);
        clReleaseKernel(kpart);
        clReleaseKernel(kern);
        return st;
    }
    if (job->mode == ROWS_DENSE) {
        cl_ulong off = (cl_ulong)a->in_off, ld = job->ld, cols = job->cols;
        st = cltopk_set_args(ctx, kern, 10, sizeof(cl_mem), &a->in, sizeof off, &off,
                             sizeof ld, &ld, sizeof cols, &cols, sizeof k, &k, sizeof sm, &sm,
                             sizeof(cl_mem), &ok, sizeof(cl_mem), &oi, sizeof want, &want,
                             sizeof ibase, &ibase);
    } else if (job->mode == ROWS_SEGMENTS) {
        st = segments_launch(ctx, rq, a, &c, opts, kern, num_wait, wait);
        clReleaseKernel(kern);
        return st;
    } else {
        cl_ulong qo = a->q_off, po = (cl_ulong)a->in_off, np = job->np;
        cl_uint d = (cl_uint)job->d;
        st = cltopk_set_args(ctx, kern, 11, sizeof(cl_mem), &a->q, sizeof qo, &qo,
                             sizeof(cl_mem), &a->in, sizeof po, &po, sizeof np, &np, sizeof d,
                             &d, sizeof k, &k, sizeof sm, &sm, sizeof(cl_mem), &ok,
                             sizeof(cl_mem), &oi, sizeof want, &want);
    }
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, kern, a->nrows * c.wg, c.wg, num_wait, wait);
    clReleaseKernel(kern);
    return st;
}

/* "a warp", or "N warps" in b */
static const char *warps_text(unsigned wn, char *b, size_t len)
{
    if (wn == 1)
        return "a warp";
    snprintf(b, len, "%u warps", wn);
    return b;
}

size_t cltopk_rows_dev_describe(cltopk_context *ctx, const cltopk_request *rq,
                                 const cltopk_rows_job *job, char *buf, size_t len)
{
    rows_cfg c;
    char why[256], warps[24];
    if (!rows_config(ctx, rq, rq->k, &c, why, sizeof why))
        return (size_t)snprintf(buf, len, "no configuration: %s", why);
    tile_cfg t;
    rowsf_cfg f;
    warp_cfg w;
    ws_cfg ws;
    int n, sf = job->mode == ROWS_DENSE && sf_plan(ctx, rq, job, &c, &f, why, sizeof why);
    if (sf)
        n = snprintf(buf, len, "the sample filter: a threshold a row from %u samples in runs "
                     "of %u (rank %u), one read by %zu groups a row (%zu work-groups) keeping "
                     "up to %zu candidates a row, their top-k by a register tile of %u x %u %s, "
                     "the whole row where they are too few or too many (decided on the device)",
                     f.s, f.srun, f.rank, f.parts, job->nrows * f.parts, f.cap, f.tf.wg, f.tf.rt,
                     f.fuse ? "in each row's last filtering group" : "in a launch of its own");
    else if (job->mode == ROWS_DENSE && ws_fit(ctx, rq, job, &c, &ws))
        n = snprintf(buf, len, "a warp a row streaming it once, %u chunks of 128 columns in "
                     "flight, the best 32 so far across its lanes, candidates above the k-th "
                     "of them merged 32 at a time (%s; %zu warps in %zu work-groups)", ws.wsu,
                     ws.wsp ? "shuffles and votes" : "exchanges through local memory",
                     job->nrows, (job->nrows + ws.wsg - 1) / ws.wsg);
    else if (job->mode == ROWS_DENSE && warp_fit(ctx, rq, job, &c, &w))
        n = snprintf(buf, len, "%s a row: %u work-items holding %u columns each in "
                     "registers%s, a threshold from each one's %u best, up to %u candidates "
                     "ranked in local memory (an exact bisection where more; %zu work-groups)",
                     warps_text(w.wn, warps, sizeof warps), 32 * w.wn, w.wr,
                     w.lean ? " as proxies of their keys" : "", w.wq, w.wcap, job->nrows);
    else if (job->mode == ROWS_DENSE && tile_dense(ctx, rq, job, &c, &t))
        n = snprintf(buf, len, "a register tile of %u work-items x %u elements, a radix "
                     "selection in local memory; %zu part%s a row (%zu work-groups%s)", t.wg,
                     t.rt, t.parts, t.parts == 1 ? "" : "s", job->nrows * t.parts,
                     t.parts > 1 ? ", then a merge a row" : "");
    else if (job->mode == ROWS_DENSE) {
        size_t parts = dense_parts(ctx, job, &c);
        n = snprintf(buf, len, "wg %u, r %u, %u kept, a buffer of %u; %zu part%s a row (%zu "
                     "work-groups%s)", c.wg, c.r, c.ktop, c.cap, parts, parts == 1 ? "" : "s",
                     job->nrows * parts, parts > 1 ? ", then a merge a row" : "");
    } else if (job->mode == ROWS_SEGMENTS) {
        seg_plan p;
        seg_planning(ctx, rq, &c, job->offsets, job->nrows, &p);
        n = snprintf(buf, len, "%zu segments of at most %d a work-item each, %zu of at most %zu "
                     "and %zu of at most %zu a register tile each, %zu of at most %zu in %zu "
                     "tiles merged a segment at a time, %zu longer ones a work-group each (wg "
                     "%u, r %u, a buffer of %u)", p.count[SEG_SHORT], ROWS_SHORT,
                     p.count[SEG_TSMALL], p.upto[SEG_TSMALL], p.count[SEG_TBIG],
                     p.upto[SEG_TBIG], p.count[SEG_SPLIT], p.upto[SEG_SPLIT], p.parts,
                     p.count[SEG_LONG], c.wg, c.r, c.cap);
    } else if (!(n = (int)cltopk_knn_dev_describe(ctx, rq, job, c.wg, buf, len))) {
        n = snprintf(buf, len, "wg %u, r %u, %u kept, a buffer of %u; a work-group a query "
                     "(%zu), distances computed in place", c.wg, c.r, c.ktop, c.cap, job->nrows);
    }
    /* a forced sample filter that cannot run says why (sf_plan's reason) */
    if (n >= 0 && (size_t)n < len && job->mode == ROWS_DENSE && c.path == BPATH_SF && !sf) {
        int m = snprintf(buf + n, len - (size_t)n, "; not the sample filter: %s", why);
        n = m < 0 ? n : n + m;
    }
    return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len;
}

int cltopk_rows_dev_buffer(cltopk_context *ctx, const cltopk_request *rq,
                           const cltopk_rows_job *job)
{
    if (job->nrows == 0 || rq->k == 0)
        return CLTOPK_OK;
    rows_launch_args a = {.in = rq->dkeys, .in_off = (long long)rq->doffset,
                          .nrows = job->nrows, .out_keys = rq->dout_keys,
                          .out_index = rq->dout_index};
    int st;
    if (job->mode == ROWS_SEGMENTS &&
        (st = rows_host_copy(ctx, SCR_ROWS_OFFS, job->offsets, (job->nrows + 1) * 8,
                             "clEnqueueWriteBuffer (segment offsets)", &a.offs)) != CLTOPK_OK)
        return st;
    a.hoffs = job->offsets;
    if (job->mode == ROWS_KNN) {
        a.q = job->dqueries;
        a.q_off = job->qoffset;
    }
    return rows_launch(ctx, rq, job, &a, rq->num_wait, rq->wait);
}

/* read n bytes of device buffer m at byte `at` into host p (blocking, after
 * the context's work) */
static int read_back(cltopk_context *ctx, cl_mem m, size_t bytes, void *p)
{
    if (!bytes)
        return CLTOPK_OK;
    cl_event *own;
    cl_uint nown = cltopk_after_own(ctx, &own);
    cl_int err = clEnqueueReadBuffer(ctx->queue, m, CL_TRUE, 0, bytes, p, nown, own, NULL);
    return err == CL_SUCCESS ? CLTOPK_OK
                             : cltopk_clfail(ctx, err, "reading the rows' results back");
}

/* write host p to the start of m, after the context's work; the event of the
 * copy in *ev */
static int write_to(cltopk_context *ctx, cl_mem m, const void *p, size_t bytes, cl_event *ev)
{
    cl_event *own;
    cl_uint nown = cltopk_after_own(ctx, &own);
    cl_int err = clEnqueueWriteBuffer(ctx->queue, m, CL_FALSE, 0, bytes ? bytes : 1, p, nown,
                                      own, ev);
    return err == CL_SUCCESS ? CLTOPK_OK : cltopk_clfail(ctx, err, "clEnqueueWriteBuffer (rows)");
}

/* the rows [r0, r1) of the job on host data: their input span (first element
 * and length) */
static void span_of(const cltopk_rows_job *job, size_t r0, size_t r1, size_t *lo, size_t *len)
{
    if (job->mode == ROWS_DENSE) {
        *lo = r0 * job->ld;
        *len = (r1 - r0 - 1) * job->ld + job->cols;
    } else {
        *lo = (size_t)job->offsets[r0];
        *len = (size_t)(job->offsets[r1] - job->offsets[r0]);
    }
}

int cltopk_rows_dev_host(cltopk_context *ctx, const cltopk_request *rq,
                         const cltopk_rows_job *job)
{
    size_t kb = (size_t)rq->bytes, k = rq->k, n = job->nrows;
    if (n == 0 || k == 0)
        return CLTOPK_OK;
    size_t chunk = cltopk_chunk_elems(ctx, rq->bytes);
    size_t out_max = (size_t)(ctx->caps.max_alloc / 8) / k; /* rows of output a batch */
    if (out_max == 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                           "rows: %zu positions of one row exceed the device's largest "
                           "allocation", k);
    cl_mem in = NULL, q = NULL, ok = NULL, oi = NULL;
    int st = CLTOPK_OK;
    if (job->mode == ROWS_KNN) {
        /* the points once, the queries in batches */
        size_t pts = job->np * job->d;
        if (pts > chunk || job->d > chunk)
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                               "knn: %zu points of dimension %zu exceed one device allocation "
                               "of %s; use cpu-heap", job->np, job->d, ctx->name);
        if ((st = cltopk_scratch(ctx, SCR_INPUT, pts * 4, &in)) != CLTOPK_OK)
            return st;
        cl_event *own;
        cl_uint nown = cltopk_after_own(ctx, &own);
        cl_int err = clEnqueueWriteBuffer(ctx->queue, in, CL_TRUE, 0, pts * 4, rq->keys, nown,
                                          own, NULL);
        if (err != CL_SUCCESS)
            return cltopk_clfail(ctx, err, "clEnqueueWriteBuffer (knn points)");
    }
    size_t r0 = 0;
    while (r0 < n && st == CLTOPK_OK) {
        /* the batch [r0, r1): as many rows as one chunk and the outputs hold */
        size_t r1 = r0 + 1, lo, len;
        if (job->mode == ROWS_KNN) {
            size_t b = chunk / job->d;
            r1 = r0 + (b < n - r0 ? b : n - r0);
        } else {
            span_of(job, r0, r1, &lo, &len);
            if (len > chunk) {
                st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                                 "rows: row %zu (%zu elements) exceeds one device chunk of %zu "
                                 "elements; use cpu-heap", r0, len, chunk);
                break;
            }
            if (job->mode == ROWS_DENSE) {
                size_t b = job->ld ? (chunk - job->cols) / job->ld + 1 : n - r0;
                r1 = r0 + (b < n - r0 ? b : n - r0);
            } else {
                while (r1 < n && (size_t)(job->offsets[r1 + 1] - job->offsets[r0]) <= chunk)
                    r1++;
            }
        }
        if (r1 - r0 > out_max)
            r1 = r0 + out_max;
        size_t nb = r1 - r0;
        rows_launch_args a = {.nrows = nb};
        cl_event ev = NULL;
        if (job->mode == ROWS_KNN) {
            a.in = in;
            if ((st = cltopk_scratch(ctx, SCR_ROWS_Q, nb * job->d * 4, &q)) != CLTOPK_OK ||
                (st = write_to(ctx, q, job->queries + r0 * job->d, nb * job->d * 4, &ev)) !=
                    CLTOPK_OK)
                break;
            a.q = q;
        } else {
            span_of(job, r0, r1, &lo, &len);
            if ((st = cltopk_scratch(ctx, SCR_INPUT, len * kb, &in)) != CLTOPK_OK ||
                (st = write_to(ctx, in, (const char *)rq->keys + lo * kb, len * kb, &ev)) !=
                    CLTOPK_OK)
                break;
            a.in = in;
            if (job->mode == ROWS_SEGMENTS) {
                a.in_off = -(long long)job->offsets[r0];
                a.hoffs = job->offsets + r0;
                if ((st = rows_host_copy(ctx, SCR_ROWS_OFFS, job->offsets + r0, (nb + 1) * 8,
                                         "clEnqueueWriteBuffer (segment offsets)", &a.offs)) !=
                    CLTOPK_OK) {
                    /* the rows' write reads the caller's keys: over before the
                     * call returns (no launch waits for it) */
                    cltopk_settle(&ev, NULL);
                    break;
                }
            }
        }
        if ((rq->want_keys && (st = cltopk_scratch(ctx, SCR_OUT_KEYS, nb * k * kb, &ok)) !=
                                  CLTOPK_OK) ||
            (rq->want_index &&
             (st = cltopk_scratch(ctx, SCR_OUT_INDEX, nb * k * 8, &oi)) != CLTOPK_OK)) {
            cltopk_settle(&ev, NULL);
            break;
        }
        a.out_keys = rq->want_keys ? ok : NULL;
        a.out_index = rq->want_index ? oi : NULL;
        st = rows_launch(ctx, rq, job, &a, 1, &ev);
        if (st != CLTOPK_OK)
            cltopk_settle(&ev, NULL);
        else
            clReleaseEvent(ev);
        if (st == CLTOPK_OK && rq->want_keys)
            st = read_back(ctx, ok, nb * k * kb, (char *)rq->out_keys + r0 * k * kb);
        if (st == CLTOPK_OK && rq->want_index)
            st = read_back(ctx, oi, nb * k * 8, rq->out_index + r0 * k);
        r0 = r1;
    }
    return st;
}

/* whether the CPU's rows on a host copy map the input (CLTOPK_BITS
 * stage=map, the default, and where CLTOPK_BITS is bad: the call's own
 * parsing reported that) or read it into host memory (stage=read) */
static int rows_stage_map(const cltopk_context *ctx, const cltopk_request *rq)
{
    char why[8];
    return bits_value(ctx, rq, BP_STAGE, why, sizeof why) != 1;
}

int cltopk_rows_cpu_on_buffer(cltopk_context *ctx, const cltopk_request *rq,
                              const cltopk_rows_job *job)
{
    size_t kb = (size_t)rq->bytes, count = job->nrows * rq->k;
    size_t qn = job->mode == ROWS_KNN ? job->nrows * job->d : 0;
    /* the input mapped, where the host may map it: on a CPU device no copy,
     * on a GPU one transfer to pinned memory, where a read into fresh host
     * memory took 14-24 ms for 32 MiB on POCL (its pages faulted in) and
     * some 30 on the H200's host (bench/RESULTS.md); else read */
    char *keys = NULL;
    int mapped = 0;
    int st = cltopk_input_view(ctx, rq, rows_stage_map(ctx, rq), &keys, &mapped);
    if (st != CLTOPK_OK)
        return st;
    float *queries = malloc(qn ? qn * 4 : 1);
    char *ok = malloc(count ? count * kb : 1);
    int64_t *oi = malloc(count ? count * 8 : 1);
    cl_int err = CL_SUCCESS;
    if (!queries || !ok || !oi) {
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for the CPU's rows");
        goto out;
    }
    if (qn && (st = cltopk_host_may_read(ctx, job->dqueries, "the queries' cl_mem", "")) !=
                  CLTOPK_OK)
        goto out;
    if ((st = cltopk_read_after_wait(ctx, rq, job->dqueries, job->qoffset * 4, qn * 4,
                                     queries)) != CLTOPK_OK)
        goto out;
    cltopk_request h = *rq;
    h.on_device = 0;
    h.keys = keys;
    h.out_keys = rq->want_keys ? ok : NULL;
    h.out_index = rq->want_index ? oi : NULL;
    cltopk_rows_job j = *job;
    j.queries = queries;
    if ((st = cltopk_cpu_rows(&h, &j)) != CLTOPK_OK) {
        st = cltopk_fail(ctx, st, "rows: out of host memory on the CPU");
        goto out;
    }
    if (rq->want_keys && count)
        err = clEnqueueWriteBuffer(ctx->queue, rq->dout_keys, CL_TRUE, 0, count * kb, ok, 0,
                                   NULL, NULL);
    if (err == CL_SUCCESS && rq->want_index && count)
        err = clEnqueueWriteBuffer(ctx->queue, rq->dout_index, CL_TRUE, 0, count * 8, oi, 0,
                                   NULL, NULL);
    if (err != CL_SUCCESS)
        st = cltopk_clfail(ctx, err, "writing the rows' results to the device");
out:
    st = cltopk_input_view_end(ctx, rq, keys, mapped, st);
    free(queries);
    free(ok);
    free(oi);
    return st;
}

#endif
