/* tune.c - the one strict parser of the CLTOPK_* tuning variables (tune.h).
 * Calls only the C library. */
#include "tune.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLTOPK_INTERNAL_TUNE __attribute__((visibility("hidden")))

CLTOPK_INTERNAL_TUNE int cltopk_param_index(const cltopk_param_table *t, const char *name)
{
    for (size_t i = 0; i < t->nparams; i++)
        if (!strcmp(t->params[i].name, name))
            return (int)i;
    return -1;
}

/* an integer written as decimal digits or 0x and hexadecimal digits, no sign,
 * blank, point or exponent */
static int plain_integer(const char *s, double *v)
{
    int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const char *d = hex ? s + 2 : s;
    if (!*d)
        return 0;
    for (const char *p = d; *p; p++)
        if (!(hex ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p)))
            return 0;
    errno = 0;
    unsigned long long x = strtoull(d, NULL, hex ? 16 : 10);
    if (errno)
        return 0;
    *v = (double)x;
    return 1;
}

static void list_names(const cltopk_param_table *t, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < t->nparams && o < len; i++) {
        int w = snprintf(buf + o, len - o, "%s%s", i ? ", " : "", t->params[i].name);
        if (w > 0)
            o += (size_t)w;
    }
}

CLTOPK_INTERNAL_TUNE int cltopk_params_apply(const cltopk_param_table *t, const char *spec,
                                             const char *origin, cltopk_params *p, char *why,
                                             size_t whylen)
{
    if (t->nparams > CLTOPK_MAX_PARAMS) { /* a table past the parser's arrays */
        snprintf(why, whylen, "%s: %zu parameters, more than the %d the parser holds "
                 "(CLTOPK_MAX_PARAMS in lib/tune.h)", t->env, t->nparams, CLTOPK_MAX_PARAMS);
        return -1;
    }
    const char *s = spec;
    while (s && *s) {
        const char *eq = strchr(s, '=');
        const char *end = strchr(s, ',');
        if (!end)
            end = s + strlen(s);
        if (!eq || eq > end || eq == s) {
            snprintf(why, whylen, "%s=\"%s\": expected NAME=VALUE[,NAME=VALUE...] at \"%s\"",
                     origin, spec, s);
            return -1;
        }
        char name[32];
        size_t nl = (size_t)(eq - s);
        if (nl >= sizeof name)
            nl = sizeof name - 1;
        memcpy(name, s, nl);
        name[nl] = 0;
        int i = cltopk_param_index(t, name);
        if (i < 0) {
            char names[256];
            list_names(t, names, sizeof names);
            snprintf(why, whylen, "%s: unknown parameter \"%s\" (known: %s)", origin, name,
                     names);
            return -1;
        }
        const cltopk_param *d = &t->params[i];
        char num[64];
        size_t vl = (size_t)(end - eq - 1);
        if (vl == 0 || vl >= sizeof num) {
            snprintf(why, whylen, "%s: %s needs a value", origin, name);
            return -1;
        }
        memcpy(num, eq + 1, vl);
        num[vl] = 0;
        char *stop;
        errno = 0;
        double v = -1;
        for (int w = 0; d->words && d->words[w]; w++)
            if (!strcmp(num, d->words[w]))
                v = w;
        if (v >= 0) {
            /* a word */
        } else if (d->words) {
            char list[160] = "";
            size_t o = 0;
            for (int w = 0; d->words[w] && o < sizeof list; w++) {
                int n = snprintf(list + o, sizeof list - o, "%s%s", w ? ", " : "", d->words[w]);
                if (n > 0)
                    o += (size_t)n;
            }
            snprintf(why, whylen, "%s: %s=%s is not one of %s", origin, name, num, list);
            return -1;
        } else if (d->integer ? !plain_integer(num, &v) || v < d->min || v > d->max
                              : ((v = strtod(num, &stop)), *stop || errno || !isfinite(v) ||
                                 v < d->min || v > d->max)) {
            snprintf(why, whylen, "%s: %s=%s is not %s in [%.17g, %.17g]", origin, name, num,
                     d->integer ? "an integer" : "a number", d->min, d->max);
            return -1;
        }
        p->v[i] = v;
        p->set |= (uint64_t)1 << i;
        s = *end ? end + 1 : end;
    }
    return 0;
}

static int row_matches(const cltopk_tuned_row *r, const cltopk_tune_for *f)
{
    return f->device_name && strstr(f->device_name, r->device) &&
           (!r->key_bytes || r->key_bytes == f->key_bytes) &&
           (r->index < 0 || r->index == f->index) && f->k >= r->kmin && f->k <= r->kmax;
}

CLTOPK_INTERNAL_TUNE int cltopk_params_resolve(const cltopk_param_table *t,
                                               const cltopk_tune_for *f, const char *env,
                                               cltopk_params *p, char *why, size_t whylen)
{
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < t->nparams && i < CLTOPK_MAX_PARAMS; i++)
        p->v[i] = f->gpu ? t->params[i].gpu : t->params[i].cpu;
    for (const cltopk_tuned_row *r = t->rows; r && r->device; r++)
        if (row_matches(r, f)) {
            char origin[160];
            snprintf(origin, sizeof origin, "tuned row for %s", r->device);
            if (cltopk_params_apply(t, r->values, origin, p, why, whylen) != 0)
                return -1;
            break;
        }
    return cltopk_params_apply(t, env, t->env, p, why, whylen);
}

static const char *env_of(const cltopk_param_table *t)
{
    const char *v = getenv(t->env);
    return v && *v ? v : NULL;
}

CLTOPK_INTERNAL_TUNE int cltopk_params_get(cltopk_tune_cache *c, const cltopk_param_table *t,
                                           const cltopk_tune_for *f, cltopk_params *p,
                                           char *why, size_t whylen)
{
    cltopk_tune_slot *s = NULL, tmp;
    for (int i = 0; c && i < c->n; i++)
        if (c->slot[i].t == t)
            s = &c->slot[i];
    if (!s) {
        s = c && c->n < (int)(sizeof c->slot / sizeof c->slot[0]) ? &c->slot[c->n++] : &tmp;
        memset(s, 0, sizeof *s);
        s->t = t;
        s->st = cltopk_params_apply(t, env_of(t), t->env, &s->env, s->why, sizeof s->why);
    }
    if (s->st != 0) {
        snprintf(why, whylen, "%s", s->why);
        return -1;
    }
    if (cltopk_params_resolve(t, f, NULL, p, why, whylen) != 0)
        return -1;
    for (size_t i = 0; i < t->nparams; i++)
        if ((s->env.set >> i) & 1u) {
            p->v[i] = s->env.v[i];
            p->set |= (uint64_t)1 << i;
            p->env |= (uint64_t)1 << i;
        }
    return 0;
}
