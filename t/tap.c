/* tap.c - the TAP producer of tap.h. */
#include "tap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long planned, run, failed;
static int lazy, registered, finished_plan;

static int finished;
static void flush_pending(void);

static void finish(void)
{
    if (finished)
        return;
    finished = 1;
    flush_pending();
    if (lazy && !finished_plan) {
        printf("1..%lu\n", run);
        finished_plan = 1;
    }
    if (failed)
        printf("# %lu of %lu tests failed\n", failed, run);
    if (planned && run != planned)
        printf("# planned %lu tests but ran %lu\n", planned, run);
    fflush(stdout);
}

static void exit_hook(void)
{
    finish();
}

int tap_done(void)
{
    finish();
    return (failed || (planned && run != planned)) ? 1 : 0;
}

static void reg(void)
{
    if (!registered) {
        atexit(exit_hook);
        registered = 1;
    }
}

void plan(unsigned long n)
{
    planned = n;
    printf("1..%lu\n", n);
    fflush(stdout);
    reg();
}

void plan_lazy(void)
{
    lazy = 1;
    reg();
}

void skip_all(const char *fmt, ...)
{
    va_list ap;
    printf("1..0 # SKIP ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    lazy = 0;
    finished_plan = 1;
    exit(0);
}

static char pending[16384];
static size_t pending_len;


static void flush_pending(void)
{
    if (pending_len) {
        pending_len = 0;
        diag("%s", pending);
        pending[0] = 0;
    }
}

void diag_after(const char *fmt, ...)
{
    va_list ap;
    if (pending_len && pending_len + 1 < sizeof pending)
        pending[pending_len++] = '\n';
    va_start(ap, fmt);
    int n = vsnprintf(pending + pending_len, sizeof pending - pending_len, fmt, ap);
    va_end(ap);
    if (n > 0)
        pending_len += (size_t)n;
    if (pending_len >= sizeof pending)
        pending_len = sizeof pending - 1;
}

static int result(int success, const char *directive, const char *fmt, va_list ap)
{
    run++;
    if (!success && !directive)
        failed++;
    printf("%sok %lu", success ? "" : "not ", run);
    if (fmt && *fmt) {
        printf(" - ");
        vprintf(fmt, ap);
    }
    if (directive)
        printf(" # TODO %s", directive);
    printf("\n");
    fflush(stdout);
    flush_pending();
    return success;
}

int ok(int success, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    result(success, NULL, fmt, ap);
    va_end(ap);
    return success;
}

int ok_todo(int success, const char *todo, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    result(success, todo, fmt, ap);
    va_end(ap);
    return success;
}

int is_int(long long wanted, long long seen, const char *fmt, ...)
{
    va_list ap;
    int success = wanted == seen;
    va_start(ap, fmt);
    result(success, NULL, fmt, ap);
    va_end(ap);
    if (!success)
        diag("wanted: %lld, seen: %lld", wanted, seen);
    return success;
}

int is_string(const char *wanted, const char *seen, const char *fmt, ...)
{
    va_list ap;
    int success = (wanted && seen) ? strcmp(wanted, seen) == 0 : wanted == seen;
    va_start(ap, fmt);
    result(success, NULL, fmt, ap);
    va_end(ap);
    if (!success)
        diag("wanted: %s%s%s, seen: %s%s%s", wanted ? "\"" : "", wanted ? wanted : "(null)",
             wanted ? "\"" : "", seen ? "\"" : "", seen ? seen : "(null)", seen ? "\"" : "");
    return success;
}

void skip(const char *fmt, ...)
{
    va_list ap;
    run++;
    flush_pending();
    printf("ok %lu # skip ", run);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

void skip_block(unsigned long count, const char *fmt, ...)
{
    char reason[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    while (count-- > 0)
        skip("%s", reason);
}

static void vdiag(const char *fmt, va_list ap)
{
    char buf[8192];
    vsnprintf(buf, sizeof buf, fmt, ap);
    fflush(stdout);
    for (char *line = buf, *nl;; line = nl + 1) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        printf("# %s\n", line);
        if (!nl || !nl[1])
            break;
    }
    fflush(stdout);
}

void diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdiag(fmt, ap);
    va_end(ap);
}

void bail(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    printf("Bail out! ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    lazy = 0;
    _Exit(255);
}

void sysbail(const char *fmt, ...)
{
    char buf[1024];
    int e = errno;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    bail("%s: %s", buf, strerror(e));
}

unsigned long tap_count(void)
{
    return run;
}

unsigned long tap_failed(void)
{
    return failed;
}

void *bmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        sysbail("malloc(%zu)", size);
    return p;
}

void *bcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        sysbail("calloc(%zu, %zu)", n, size);
    return p;
}
