/* tune.h - the tuning parameters of the algorithms, and the one parser of the
 * CLTOPK_* variables that set them.
 *
 * Each algorithm that has parameters keeps one table: the variable's name, its
 * parameters (name, GPU default, CPU default, min, max, whether an integer),
 * and per-device tuned rows (a device-name substring, conditions on the key
 * width, whether positions travel and the range of k, then values written the
 * same way as the variable).  The value of a parameter is its default for the
 * device kind, then the first matching tuned row, then the variable.  A
 * variable with an unknown name, a value that is not a number, out of range
 * or not an integer where one is needed, makes the algorithm refuse the call
 * (CLTOPK_ERR_UNSUPPORTED) with a message naming the variable and the bounds.
 *
 * Header-only types plus lib/tune.c, which calls only the bottom layer, so the
 * bank-conflict replay (t/banks.c) can read the tuned rows too. */
#ifndef CLTOPK_TUNE_H
#define CLTOPK_TUNE_H

#include <stddef.h>
#include <stdint.h>

#define CLTOPK_MAX_PARAMS 64 /* at most 64: the bit sets below */

typedef struct {
    const char *name;
    double gpu, cpu;   /* defaults on GPUs and on other devices */
    double min, max;
    int integer;
    const char *const *words; /* NULL, or the words the value may be instead of
                                 a number (NULL-ended): word i is the value i */
} cltopk_param;

typedef struct {
    const char *device;  /* substring of the device name */
    unsigned key_bytes;  /* 0: any */
    int index;           /* -1: any; else 0 keys alone, 1 with positions */
    size_t kmin, kmax;   /* k (rounded as the algorithm rounds it) in [kmin, kmax] */
    const char *values;  /* "NAME=VALUE,..." */
} cltopk_tuned_row;

typedef struct {
    const char *env;                /* e.g. "CLTOPK_RADIX" */
    const cltopk_param *params;
    size_t nparams;
    const cltopk_tuned_row *rows;   /* ended by a row with device NULL; may be NULL */
} cltopk_param_table;

typedef struct {
    double v[CLTOPK_MAX_PARAMS];
    uint64_t set; /* bit i: parameter i came from a tuned row or the variable */
    uint64_t env; /* bit i: parameter i came from the variable */
} cltopk_params;

/* what selects a tuned row */
typedef struct {
    int gpu;
    const char *device_name;
    unsigned key_bytes;
    int index;
    size_t k;
} cltopk_tune_for;

/* Apply "NAME=VALUE,..." (spec) onto p; names and bounds from t; `origin`
 * names the source in messages.  0, or -1 with the reason in why. */
int cltopk_params_apply(const cltopk_param_table *t, const char *spec, const char *origin,
                        cltopk_params *p, char *why, size_t whylen);

/* Defaults, then the first tuned row matching `f`, then the variable t->env
 * (read once by the caller and passed as env; NULL: unset).  0, or -1 with
 * the reason in why. */
int cltopk_params_resolve(const cltopk_param_table *t, const cltopk_tune_for *f, const char *env,
                          cltopk_params *p, char *why, size_t whylen);

/* The parameters of one call: the variable t->env is read and parsed once per
 * call (the first time an algorithm of the call asks), kept in the cache, and
 * combined with the defaults and tuned rows for `f` on every ask. */
typedef struct {
    const cltopk_param_table *t;
    int st;            /* 0, or -1: the variable is bad (why) */
    cltopk_params env; /* what the variable sets */
    char why[256];
} cltopk_tune_slot;

typedef struct {
    cltopk_tune_slot slot[8];
    int n;
} cltopk_tune_cache;

/* As cltopk_params_resolve, with the variable read through the cache (which
 * may be NULL: then read now). */
int cltopk_params_get(cltopk_tune_cache *c, const cltopk_param_table *t, const cltopk_tune_for *f,
                      cltopk_params *p, char *why, size_t whylen);

/* index of parameter `name` in t (the tables' users name their slots with an
 * enum in table order; this is for tests and tools) or -1 */
int cltopk_param_index(const cltopk_param_table *t, const char *name);

#endif
