/* banks.c - the bitonic reducer's local-memory accesses are bank-conflict free.
 *
 * Replays, for every configuration the library picks on a GPU (k = 1 .. 2048,
 * 32- and 64-bit keys, with and without the index, 48 KB of local memory, 16
 * items a work-item), every local-memory access of cl/reducer.cl in program order, warp by
 * warp, with the kernel's own index arithmetic (cl/schedule.h), on 32 banks of 4
 * bytes.  A warp access costs as many passes as the most distinct words any one
 * bank must serve (one word read by many lanes is a broadcast).  64-bit keys are
 * served in half-warps, each lane touching two banks.  Every access must take
 * one pass; the plain layout (SWZ=0) must not, which shows the replay can see a
 * conflict.  The diag lines give the conflict-weighted local traffic per input
 * byte (the coefficient c of the cost model, T_s = c * D / B_S). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../cl/schedule.h"
#include "bitonic_cfg.h"
#include "tap.h"

typedef struct {
    const bitonic_cfg *c;
    unsigned swz;
    unsigned maxdeg;      /* worst passes of one warp access */
    double weighted;      /* sum over accesses of passes * bytes per pass */
    unsigned long accesses;
    char worst[160];      /* where the worst access happened */
} sim;

/* One warp-wide access: lanes with act[l] touch logical position pos[l] in
 * each of the kernel's local arrays, all of 4-byte words (64-bit keys are kept
 * as a hi and a lo array).  Every array sees the same positions, so the passes
 * of one array are those of all; the traffic counts every array. */
static void warp_access(sim *s, const unsigned *pos, const int *act, const char *what)
{
    unsigned words[32][32];
    unsigned nw[32] = {0};
    unsigned deg = 0;
    for (int l = 0; l < 32; l++) {
        if (!act[l])
            continue;
        unsigned w = sched_phys(pos[l], s->swz), bank = w % 32;
        int seen = 0;
        for (unsigned i = 0; i < nw[bank]; i++)
            seen |= words[bank][i] == w;
        if (!seen)
            words[bank][nw[bank]++] = w;
        if (nw[bank] > deg)
            deg = nw[bank];
    }
    if (!deg)
        return;
    unsigned arrays = s->c->key_bytes / 4 + (s->c->index ? 1 : 0);
    s->weighted += (double)deg * 128.0 * arrays;
    s->accesses++;
    if (deg > s->maxdeg) {
        s->maxdeg = deg;
        snprintf(s->worst, sizeof s->worst, "%s: %u-way", what, deg);
    }
}

/* position function of one access: thread t, repetition r -> position, or -1 */
typedef long (*posfn)(const sim *s, unsigned t, unsigned r, const void *arg);

static void replay(sim *s, posfn f, unsigned reps, const void *arg, const char *what)
{
    unsigned wg = s->c->WG;
    for (unsigned r = 0; r < reps; r++)
        for (unsigned w0 = 0; w0 < wg; w0 += 32) {
            unsigned pos[32];
            int act[32], any = 0;
            for (unsigned l = 0; l < 32; l++) {
                long p = (w0 + l < wg) ? f(s, w0 + l, r, arg) : -1;
                act[l] = p >= 0;
                pos[l] = p >= 0 ? (unsigned)p : 0;
                any |= act[l];
            }
            if (any)
                warp_access(s, pos, act, what);
        }
}

/* ---------------------------------------------------- the kernel's accesses */

typedef struct {
    unsigned n, lo, M, j, hold, second;
} acc_arg;

static long pos_store(const sim *s, unsigned t, unsigned r, const void *v)
{
    const acc_arg *a = v;
    (void)s, (void)r;
    return (long)(t * a->hold + a->j);
}

static long pos_chunk(const sim *s, unsigned t, unsigned r, const void *v)
{
    const acc_arg *a = v;
    unsigned g = t + r * s->c->WG;
    if (g >= a->n / a->M)
        return -1;
    return (long)(sched_chunk_base(g, a->lo, a->M) + a->j * a->lo);
}

static long pos_merge_read(const sim *s, unsigned t, unsigned r, const void *v)
{
    const acc_arg *a = v;
    unsigned p = t + r * s->c->WG;
    if (p >= a->n)
        return -1;
    return (long)(sched_merge_src(p, s->c->K) + (a->second ? s->c->K : 0));
}

static long pos_linear(const sim *s, unsigned t, unsigned r, const void *v)
{
    const acc_arg *a = v;
    unsigned p = t + r * s->c->WG;
    return p < a->n ? (long)p : -1;
}

static unsigned reps_for(unsigned items, unsigned wg)
{
    return (items + wg - 1) / wg;
}

static void lstep(sim *s, unsigned n, unsigned hi, unsigned M)
{
    acc_arg a = {n, hi * 2 / M, M, 0, 0, 0};
    unsigned reps = reps_for(n / M, s->c->WG);
    for (int rw = 0; rw < 2; rw++) /* loads, then stores, same positions */
        for (a.j = 0; a.j < M; a.j++)
            replay(s, pos_chunk, reps, &a, rw ? "chunk store" : "chunk load");
}

static void lphase(sim *s, unsigned n, unsigned hi)
{
    unsigned steps = 0;
    for (unsigned x = hi; x > 0; x >>= 1)
        steps++;
    unsigned per = s->c->MAXM == 16 ? 4 : s->c->MAXM == 8 ? 3 : s->c->MAXM == 4 ? 2 : 1;
    unsigned first = sched_first_steps(hi, per);
    while (steps > 0) {
        unsigned m = steps < first ? steps : first;
        lstep(s, n, hi, 1u << m);
        hi >>= m;
        steps -= m;
        first = per;
    }
}

static void lmerge(sim *s, unsigned n)
{
    acc_arg a = {n / 2, 0, 0, 0, 0, 0};
    unsigned reps = reps_for(n / 2, s->c->WG);
    replay(s, pos_merge_read, reps, &a, "merge read");
    a.second = 1;
    replay(s, pos_merge_read, reps, &a, "merge read +K");
    replay(s, pos_linear, reps, &a, "merge write");
}

static void finish(sim *s, unsigned n, int final)
{
    const bitonic_cfg *c = s->c;
    unsigned stop = final ? c->K : 2 * c->OUT;
    while (n > stop) {
        lmerge(s, n);
        n /= 2;
        lphase(s, n, c->K / 2);
    }
    acc_arg a = {final ? c->K : c->OUT, 0, 0, 0, 0, 0};
    unsigned reps = reps_for(a.n, c->WG);
    if (final) {
        replay(s, pos_linear, reps, &a, "final read");
        return;
    }
    replay(s, pos_merge_read, reps, &a, "fused merge read");
    a.second = 1;
    replay(s, pos_merge_read, reps, &a, "fused merge read +K");
}

static void store_hold(sim *s)
{
    acc_arg a = {0, 0, 0, 0, bcfg_hold(s->c), 0};
    for (a.j = 0; a.j < a.hold; a.j++)
        replay(s, pos_store, 1, &a, "register store");
}

/* sort_reducer (first != 0) or bitonic_reducer, non-final or final */
static void run_kernel(sim *s, int first, int final)
{
    const bitonic_cfg *c = s->c;
    unsigned E = bcfg_E(c), hold = bcfg_hold(c);
    store_hold(s);
    if (first)
        for (unsigned len = hold; len < c->K; len <<= 1)
            lphase(s, E, len);
    else if (c->K > c->B)
        lphase(s, E, c->K / 2);
    finish(s, hold * c->WG, final);
}

static sim simulate(const bitonic_cfg *c, unsigned swz, int first, int final)
{
    sim s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.swz = swz;
    run_kernel(&s, first, final);
    return s;
}

/* replay both kernels of configuration c; 1 ok line each */
static void check_cfg(const bitonic_cfg *cp, unsigned K, unsigned kb, unsigned index,
                      int *plain_conflicts_p)
{
    bitonic_cfg c = *cp;
    int plain_conflicts = 0;
    static const char *const names[] = {"bitonic_reducer", "sort_reducer"};
    for (int first = 1; first >= 0; first--) {
        sim s = simulate(&c, 1, first, 0);
        sim f = simulate(&c, 1, first, 1);
        sim p = simulate(&c, 0, first, 0);
        plain_conflicts |= p.maxdeg > 1;
        double in_bytes = (double)bcfg_E(&c) * kb;
        ok(s.maxdeg == 1 && f.maxdeg == 1,
           "%s K=%u %u-bit keys%s B=%u WG=%u OUT=%u: conflict-free (%s%s)",
           names[first], K, kb * 8, index ? "+index" : "", c.B, c.WG, c.OUT,
           s.maxdeg > 1 ? s.worst : "", f.maxdeg > 1 ? f.worst : "");
        diag("  c = %.2f swizzled, %.2f plain (worst plain: %s)",
             s.weighted / in_bytes, p.weighted / in_bytes, p.worst);
    }
    *plain_conflicts_p |= plain_conflicts;
}

int main(void)
{
    plan_lazy();
    const size_t budget = 48 * 1024 - 1024, max_wg = 1024;
    int plain_conflicts = 0;
    for (unsigned kb = 4; kb <= 8; kb += 4)
        for (unsigned index = 0; index <= 1; index++)
            for (unsigned K = 1; K <= 2048; K *= 2) {
                bitonic_cfg c;
                if (bcfg_default(&c, K, kb, index, budget, max_wg, 16) != 0) {
                    diag("K=%u key %u bytes index %u: no configuration fits 48 KB", K, kb * 8,
                         index);
                    continue;
                }
                check_cfg(&c, K, kb, index, &plain_conflicts);
            }
    /* the tuned rows of the per-device table, each K of its range, applied as
     * the library applies them (lib/tune.c) */
    for (size_t i = 0; bcfg_rows[i].device; i++)
        for (size_t K = bcfg_rows[i].kmin; K <= bcfg_rows[i].kmax; K *= 2) {
            const cltopk_tuned_row *r = &bcfg_rows[i];
            unsigned kb = r->key_bytes ? r->key_bytes : 4, index = r->index > 0;
            bitonic_cfg c;
            cltopk_params p = {{0}, 0, 0};
            char why[256] = "";
            int bad = bcfg_default(&c, (unsigned)K, kb, index, budget, max_wg, 16) != 0 ||
                      cltopk_params_apply(&bcfg_table, r->values, r->device, &p, why,
                                          sizeof why) != 0;
            if (!bad) {
                bcfg_apply(&c, &p);
                bad = bcfg_check(&c, budget, max_wg, why, sizeof why) != 0;
            }
            ok(!bad, "tuned row %zu (%s K=%zu) is a valid configuration%s%s", i, r->device, K,
               bad ? ": " : "", why);
            if (!bad)
                check_cfg(&c, c.K, c.key_bytes, c.index, &plain_conflicts);
        }
    ok(plain_conflicts, "the replay sees conflicts in the plain layout (it can fail)");
    return tap_done();
}
