/* threads.c - the thread rule of cltopk.h.
 *
 * "Distinct contexts may be used from different threads at the same time.
 * Calls on one context are serialized [...] so sharing one context between
 * threads is safe."  Several threads, each with its own data and oracle answer,
 * call at once:
 *   - on one shared "cpu" context (CPU_HEAP, AUTO selection);
 *   - on one shared OpenCL context (BITONIC, AUTO, cl_mem calls), if any;
 *   - each on a context of its own, opened and closed inside the thread;
 * every result bit for bit against the oracle.
 * First, in fresh processes (forked before this one touches OpenCL): eight
 * threads open the same OpenCL device at once, the first use of OpenCL in the
 * process (the device scan must be done once, not by every thread at once). */
#include "testlib.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define NTHREADS 4
#define ROUNDS 25

typedef struct {
    int id;
    cltopk_context *ctx; /* shared, or NULL: open one of its own */
    const char *dev;     /* device string for an own context */
    int is_cl;
    size_t limit;        /* bitonic limit (for float32, the smallest of all types here) */
    uint64_t seed;
    int good;
    char msg[2048];
} job_t;

static void *worker(void *arg)
{
    job_t *j = arg;
    rng_t rng;
    rng_init(&rng, j->seed);
    cltopk_context *ctx = j->ctx;
    j->good = 1;
    if (!ctx && cltopk_open(&ctx, j->dev) != CLTOPK_OK) {
        snprintf(j->msg, sizeof j->msg, "thread %d: open(%s): %s", j->id, j->dev,
                 cltopk_last_error(NULL));
        j->good = 0;
        return NULL;
    }
    for (int r = 0; r < ROUNDS && j->good; r++) {
        cltopk_dtype t = all_types[(size_t)(j->id + r) % 6];
        int s = (j->id + r) & 1;
        size_t n = 1000 + (size_t)rng_below(&rng, 40000);
        void *keys = bmalloc(n * tsize(t));
        gen_data(t, (r % 3) ? "uniform" : "narrow", n, s, &rng, keys);
        int64_t *perm = oracle_order(t, keys, n, s);
        size_t k = 1 + (size_t)rng_below(&rng, j->limit ? j->limit : 3000);
        if (k > n)
            k = n;
        cltopk_algo a = j->is_cl && (r % 2) ? CLTOPK_ALGO_BITONIC
                                            : (r % 4 == 0 ? CLTOPK_ALGO_AUTO
                                                          : CLTOPK_ALGO_CPU_HEAP);
        char m[1024];
        if (!check_topk(ctx, a, t, keys, n, k, s, perm, WANT_BOTH, CLTOPK_OK, m, sizeof m)) {
            snprintf(j->msg, sizeof j->msg, "thread %d round %d: %s %s n=%zu k=%zu: %s", j->id,
                     r, cltopk_algo_name(a), tname(t), n, k, m);
            j->good = 0;
        }
        size_t rank = (size_t)rng_below(&rng, n);
        if (j->good && !check_select(ctx, CLTOPK_ALGO_AUTO, t, keys, n, rank, s, perm,
                                     WANT_BOTH, CLTOPK_OK, m, sizeof m)) {
            snprintf(j->msg, sizeof j->msg, "thread %d round %d: select %s n=%zu rank %zu: %s",
                     j->id, r, tname(t), n, rank, m);
            j->good = 0;
        }
        free(perm);
        free(keys);
    }
    if (!j->ctx)
        cltopk_close(ctx);
    return NULL;
}

static void run_jobs(cltopk_context *shared, const char *dev, int is_cl, size_t limit,
                     const char *what, rng_t *rng)
{
    pthread_t th[NTHREADS];
    job_t jobs[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].id = i;
        jobs[i].ctx = shared;
        jobs[i].dev = dev;
        jobs[i].is_cl = is_cl;
        jobs[i].limit = limit;
        jobs[i].seed = rng_next(rng);
        if (pthread_create(&th[i], NULL, worker, &jobs[i]) != 0)
            bail("pthread_create failed");
    }
    int good = 1;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        if (!jobs[i].good) {
            good = 0;
            diag_after("%s", jobs[i].msg);
        }
    }
    ok(good, "%d threads at once: %s", NTHREADS, what);
}

/* ---- eight threads open one device at once, first thing in a fresh process */

#define OPENERS 8
#define OPEN_RUNS 16

typedef struct {
    pthread_barrier_t *start;
    const char *dev;
    int st;
} opener_t;

static void *opener(void *arg)
{
    opener_t *o = arg;
    cltopk_context *ctx = NULL;
    pthread_barrier_wait(o->start);
    o->st = cltopk_open(&ctx, o->dev);
    cltopk_close(ctx);
    return NULL;
}

/* the child: 0 every thread opened the device, 3 no OpenCL device, 1 another
 * failure (a crash is a signal) */
static int open_race_child(const char *dev)
{
    alarm(300);
    pthread_barrier_t start;
    if (pthread_barrier_init(&start, NULL, OPENERS) != 0)
        return 1;
    pthread_t th[OPENERS];
    opener_t o[OPENERS];
    for (int i = 0; i < OPENERS; i++) {
        o[i].start = &start;
        o[i].dev = dev;
        o[i].st = -1;
        if (pthread_create(&th[i], NULL, opener, &o[i]) != 0)
            return 1;
    }
    int opened = 0, nodev = 0;
    for (int i = 0; i < OPENERS; i++) {
        pthread_join(th[i], NULL);
        opened += o[i].st == CLTOPK_OK;
        nodev += o[i].st == CLTOPK_ERR_NO_DEVICE || o[i].st == CLTOPK_ERR_NO_OPENCL;
    }
    pthread_barrier_destroy(&start);
    return opened == OPENERS ? 0 : nodev == OPENERS ? 3 : 1;
}

/* Before this process uses OpenCL: OPEN_RUNS fresh processes, each with eight
 * threads opening the test device at once. */
static void open_race(void)
{
    const char *dev = getenv("CLTOPK_TEST_DEVICE");
    if (dev && !strcmp(dev, "cpu")) {
        skip("threads opening one OpenCL device at once: CLTOPK_TEST_DEVICE=cpu");
        return;
    }
    if (!dev || !*dev)
        dev = "0:0";
    int crashed = 0, failed = 0, nodev = 0;
    for (int r = 0; r < OPEN_RUNS; r++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
            sysbail("fork");
        if (pid == 0)
            _exit(open_race_child(dev));
        int ws;
        if (waitpid(pid, &ws, 0) != pid)
            sysbail("waitpid");
        if (WIFSIGNALED(ws)) {
            crashed++;
            diag_after("run %d: killed by signal %d (%s)", r, WTERMSIG(ws),
                       strsignal(WTERMSIG(ws)));
        } else if (WEXITSTATUS(ws) == 3) {
            nodev++;
        } else if (WEXITSTATUS(ws) != 0) {
            failed++;
            diag_after("run %d: exit status %d", r, WEXITSTATUS(ws));
        }
    }
    if (nodev == OPEN_RUNS) {
        skip("threads opening one OpenCL device at once: no OpenCL device \"%s\"", dev);
        return;
    }
    ok(!crashed && !failed && !nodev,
       "%d fresh processes, %d threads each opening \"%s\" at once: %d crashed, %d failed",
       OPEN_RUNS, OPENERS, dev, crashed, failed + nodev);
}

int main(void)
{
    plan_lazy();
    watchdog(900);
    open_race(); /* first: the processes it forks must not inherit OpenCL state */
    rng_t rng;
    rng_init(&rng, test_seed() ^ 0x7417);

    cltopk_context *cpu;
    if (cltopk_open(&cpu, "cpu") != CLTOPK_OK)
        bail("cannot open the cpu device");
    run_jobs(cpu, NULL, 0, 0, "one shared cpu context", &rng);
    cltopk_close(cpu);
    run_jobs(NULL, "cpu", 0, 0, "a cpu context each", &rng);

    char why[512], dev[256];
    cltopk_context *cl;
    if (open_test_cl(&cl, why, sizeof why)) {
        size_t lim = (size_t)-1;
        for (int t = 0; t < 6; t++) {
            size_t l = bitonic_limit(cl, all_types[t]);
            if (l < lim)
                lim = l;
        }
        run_jobs(cl, NULL, 1, lim, "one shared OpenCL context", &rng);
        cltopk_close(cl);
        test_cl_device(dev, sizeof dev);
        run_jobs(NULL, dev, 1, lim, "an OpenCL context each", &rng);
    } else {
        skip("OpenCL: %s", why);
    }
    return tap_done();
}
