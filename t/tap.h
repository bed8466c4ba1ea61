/* tap.h - a small TAP producer for the test programs, in the spirit of C TAP
 * Harness tests/tap/basic.h (our own code).
 *
 * Everything goes to stdout (diagnostics as "# ..." comment lines, which
 * Automake's tap-driver.sh copies to the log), flushed line by line.  Either
 * plan(n) first, or plan_lazy() and the plan is printed by tap_done() (or at
 * exit).  main() ends with `return tap_done();`:
 * 0 when every test passed as planned, else 1.  bail() exits 255, skip_all() 0. */
#ifndef CLTOPK_T_TAP_H
#define CLTOPK_T_TAP_H

#include <stddef.h>

#if defined(__GNUC__)
#define TAP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TAP_NORETURN __attribute__((noreturn))
#else
#define TAP_PRINTF(f, a)
#define TAP_NORETURN
#endif

/* Announce n tests. */
void plan(unsigned long n);
/* Print the plan at exit, after the tests (for counts known only at run time). */
void plan_lazy(void);
/* Skip the whole program: "1..0 # SKIP reason", exit 0.  Only before any test. */
TAP_NORETURN void skip_all(const char *fmt, ...) TAP_PRINTF(1, 2);

/* One test; returns success (so callers can add diagnostics on failure). */
int ok(int success, const char *fmt, ...) TAP_PRINTF(2, 3);
/* Integers: equal, with both values in a diagnostic on failure. */
int is_int(long long wanted, long long seen, const char *fmt, ...) TAP_PRINTF(3, 4);
/* Strings (NULL allowed on either side). */
int is_string(const char *wanted, const char *seen, const char *fmt, ...) TAP_PRINTF(3, 4);
/* Skip one test ("ok N # skip reason"). */
void skip(const char *fmt, ...) TAP_PRINTF(1, 2);
/* Skip count tests. */
void skip_block(unsigned long count, const char *fmt, ...) TAP_PRINTF(2, 3);
/* A TODO test: reported, but expected to fail (a known bug; see the reason). */
int ok_todo(int success, const char *todo, const char *fmt, ...) TAP_PRINTF(3, 4);

/* "# message" (multi-line messages get "# " on every line). */
void diag(const char *fmt, ...) TAP_PRINTF(1, 2);
/* A diagnostic printed after the next test line (for failures found before the
 * test's ok() is reported). */
void diag_after(const char *fmt, ...) TAP_PRINTF(1, 2);
/* "Bail out! message" and exit 255: the program cannot go on. */
TAP_NORETURN void bail(const char *fmt, ...) TAP_PRINTF(1, 2);
/* Like bail, for a failed allocation or system call (appends strerror(errno)). */
TAP_NORETURN void sysbail(const char *fmt, ...) TAP_PRINTF(1, 2);

/* Print the lazy plan and a summary; the exit status for main(). */
int tap_done(void);

/* Tests run and failed so far. */
unsigned long tap_count(void);
unsigned long tap_failed(void);

/* malloc/calloc that bail on failure. */
void *bmalloc(size_t size);
void *bcalloc(size_t n, size_t size);

#endif
