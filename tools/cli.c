/* cli.c - helpers shared by the subcommands of `cltopk` (see cli.h). */
#include "cli.h"
#include "gen.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- options */

void cli_init(cli_parser *p, const char *cmd, int argc, char **argv)
{
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
    p->i = 1;
    p->no_more_options = 0;
}

int cli_next(cli_parser *p, const cli_option *opts, const char **arg)
{
    *arg = NULL;
    if (p->i >= p->argc)
        return -1;
    char *a = p->argv[p->i++];
    if (p->no_more_options || a[0] != '-' || a[1] == 0) {
        *arg = a;
        return 0;
    }
    if (!strcmp(a, "--")) {
        p->no_more_options = 1;
        return cli_next(p, opts, arg);
    }
    const cli_option *o = NULL;
    const char *inline_val = NULL;
    if (a[1] == '-') {
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        for (const cli_option *q = opts; q->id; q++)
            if (q->long_name && strlen(q->long_name) == len && !strncmp(q->long_name, name, len))
                o = q;
        if (!o) {
            usage_error(p->cmd, "unknown option '%.*s'", (int)(len + 2), a);
            return -2;
        }
        if (eq) {
            if (!o->has_arg) {
                usage_error(p->cmd, "option '--%s' takes no value", o->long_name);
                return -2;
            }
            inline_val = eq + 1;
        }
    } else {
        for (const cli_option *q = opts; q->id; q++)
            if (q->short_name && q->short_name == a[1])
                o = q;
        if (!o) {
            usage_error(p->cmd, "unknown option '-%c'", a[1]);
            return -2;
        }
        if (a[2]) {
            if (!o->has_arg) {
                usage_error(p->cmd, "option '-%c' takes no value (in '%s')", a[1], a);
                return -2;
            }
            inline_val = a + 2;
        }
    }
    if (o->has_arg) {
        if (inline_val) {
            *arg = inline_val;
        } else if (p->i < p->argc) {
            *arg = p->argv[p->i++];
        } else {
            if (o->long_name)
                usage_error(p->cmd, "option '--%s' needs a value", o->long_name);
            else
                usage_error(p->cmd, "option '-%c' needs a value", o->short_name);
            return -2;
        }
    }
    return o->id;
}

/* ---------------------------------------------------------------- messages */

/* "cltopk CMD: message\n" on stderr */
static void message(const char *cmd, const char *fmt, va_list ap)
{
    fprintf(stderr, "cltopk%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    message(cmd, fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try 'cltopk %s%s--help' for more information.\n", cmd ? cmd : "",
            cmd ? " " : "");
    return EXIT_USAGE;
}

int fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    message(cmd, fmt, ap);
    va_end(ap);
    return EXIT_FAIL;
}

int lib_fail(const char *cmd, const char *what, int st, const cltopk_context *ctx)
{
    const char *detail = cltopk_last_error(ctx);
    fprintf(stderr, "cltopk %s: %s: %s (status %d)\n", cmd, what, cltopk_strerror(st), st);
    if (detail && *detail)
        fprintf(stderr, "  %s\n", detail);
    return EXIT_FAIL;
}

/* case-insensitive: does hay contain needle? */
static int contains_nocase(const char *hay, const char *needle)
{
    size_t nl = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < nl && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == nl)
            return 1;
    }
    return nl == 0;
}

static int eq_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* One decimal index of P:D: digits only, at most UINT_MAX; -1 if not. */
static int parse_index(const char **ps, char stop, unsigned *out)
{
    const char *s = *ps;
    uint64_t v = 0;
    if (!isdigit((unsigned char)*s))
        return -1;
    for (; isdigit((unsigned char)*s); s++) {
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > UINT_MAX)
            return -1;
    }
    if (*s != stop)
        return -1;
    *ps = s;
    *out = (unsigned)v;
    return 0;
}

int device_spec(const char *spec, char *buf, size_t len, char *why, size_t whylen)
{
    const char *origin = "--device";
    why[0] = 0;
    if (!spec || eq_nocase(spec, "auto")) {
        /* auto: $CLTOPK_DEVICE, checked as strictly, else the library's choice */
        const char *env = getenv("CLTOPK_DEVICE");
        if (!env || !*env || eq_nocase(env, "auto")) {
            snprintf(buf, len, "auto");
            return 0;
        }
        spec = env;
        origin = "CLTOPK_DEVICE";
    }
    int bad = !strcmp(origin, "--device") ? 2 : 1;
    /* several devices: "all" or a comma list, which the library checks item by
     * item */
    if (eq_nocase(spec, "all") || strchr(spec, ',')) {
        snprintf(buf, len, "%s", spec);
        return 0;
    }
    if (eq_nocase(spec, "cpu") || eq_nocase(spec, "gpu")) {
        snprintf(buf, len, "%c%c%c", tolower((unsigned char)spec[0]),
                 tolower((unsigned char)spec[1]), tolower((unsigned char)spec[2]));
        return 0;
    }
    /* a ':' and no letter: meant as P:D, which must be two plain decimal numbers
     * (cltopk_open's %u would read "+0:0", "-4294967296:0" and "4294967296:0"
     * as 0:0) */
    int letters = 0;
    for (const char *c = spec; *c; c++)
        letters |= isalpha((unsigned char)*c) != 0;
    if (strchr(spec, ':') && !letters) {
        const char *c = spec;
        unsigned p, d;
        if (parse_index(&c, ':', &p) == 0) {
            c++;
            if (parse_index(&c, 0, &d) == 0) {
                snprintf(buf, len, "%u:%u", p, d);
                return 0;
            }
        }
        snprintf(why, whylen, "bad device '%s' from %s: P:D is two decimal numbers (digits "
                 "only, each below 2^32) as 'cltopk devices' lists them, like 0:1", spec,
                 origin);
        return bad;
    }
    /* part of a name: it must name one device (cltopk_open would take the first) */
    size_t count = cltopk_device_count(), matches = 0;
    char list[2048] = "";
    size_t at = 0;
    for (size_t i = 0; i < count; i++) {
        cltopk_device_info info;
        char full[300];
        if (cltopk_device_get(i, &info) != CLTOPK_OK)
            continue;
        snprintf(full, sizeof full, "%s / %s", info.platform_name, info.device_name);
        if (!contains_nocase(full, spec))
            continue;
        if (++matches == 1)
            snprintf(buf, len, "%u:%u", info.platform, info.device);
        int w = snprintf(list + at, sizeof list - at, "\n  %u:%u  %s", info.platform,
                         info.device, full);
        if (w > 0 && (size_t)w < sizeof list - at)
            at += (size_t)w;
    }
    if (matches > 1) {
        snprintf(why, whylen, "device '%s' from %s is ambiguous: it is part of the names of "
                 "%zu devices:%s\ngive one of their P:D, or more of the name", spec, origin,
                 matches, list);
        return bad;
    }
    if (matches == 0)
        snprintf(buf, len, "%s", spec); /* cltopk_open says there is no such device */
    return 0;
}

int open_device(const char *cmd, const char *spec, cltopk_context **ctx)
{
    *ctx = NULL;
    char exact[512], why[3000];
    int rc = device_spec(spec, exact, sizeof exact, why, sizeof why);
    if (rc == EXIT_USAGE)
        return usage_error(cmd, "%s", why);
    if (rc)
        return fail(cmd, "%s", why);
    int st = cltopk_open(ctx, exact);
    if (st != CLTOPK_OK) {
        const char *asked = spec ? spec : "auto";
        char what[600];
        if (strcmp(asked, exact))
            snprintf(what, sizeof what, "cannot open device \"%s\" (%s)", asked, exact);
        else
            snprintf(what, sizeof what, "cannot open device \"%s\"", asked);
        return lib_fail(cmd, what, st, NULL);
    }
    return 0;
}

/* ----------------------------------------------------------------- numbers */

static int parse_digits(const char **ps, uint64_t *out)
{
    const char *s = *ps;
    uint64_t v = 0;
    if (!isdigit((unsigned char)*s))
        return -1;
    for (; isdigit((unsigned char)*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *ps = s;
    *out = v;
    return 0;
}

int parse_count(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v, e;
    if (!s || parse_digits(&s, &v) < 0)
        return -1;
    if (*s == '^') {
        s++;
        if (parse_digits(&s, &e) < 0 || *s)
            return -1;
        uint64_t b = v;
        v = 1;
        for (uint64_t i = 0; i < e; i++) {
            if (b && v > UINT64_MAX / b)
                return -1;
            v *= b;
        }
    } else if (*s) {
        static const char units[] = "kmgt";
        const char *u = strchr(units, tolower((unsigned char)*s));
        if (!u)
            return -1;
        s++;
        if (*s == 'i' || *s == 'I')
            s++;
        if (*s)
            return -1;
        int shift = 10 * (int)(u - units + 1);
        if (v > (UINT64_MAX >> shift))
            return -1;
        v <<= shift;
    }
    if (v > max)
        return -1;
    *out = v;
    return 0;
}

int split_list(char *s, const char **items, size_t cap, size_t *len)
{
    *len = 0;
    for (char *p = s;;) {
        char *c = strchr(p, ',');
        if (c)
            *c = 0;
        if (!*p || *len >= cap)
            return -1;
        items[(*len)++] = p;
        if (!c)
            return 0;
        p = c + 1;
    }
}

int parse_count_list(const char *s, uint64_t max, uint64_t *out, size_t cap, size_t *len)
{
    char buf[1024];
    const char *items[64];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    if (cap > 64)
        cap = 64;
    if (split_list(buf, items, cap, len) < 0)
        return -1;
    for (size_t i = 0; i < *len; i++)
        if (parse_count(items[i], max, &out[i]) < 0)
            return -1;
    return 0;
}

int parse_u64(const char *s, uint64_t *out)
{
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2, base = 16;
    if (!isxdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int parse_type(const char *cmd, const char *s, cltopk_dtype *t)
{
    if (cltopk_dtype_parse(s, t) == CLTOPK_OK)
        return 0;
    return usage_error(cmd, "unknown type '%s' (use f32, f64, i32, u32, i64 or u64)", s);
}

int parse_algo(const char *cmd, const char *s, cltopk_algo *a)
{
    if (cltopk_algo_parse(s, a) == CLTOPK_OK)
        return 0;
    /* the library's names (the values from 1 up, until one has none), so that
     * the list stays whole */
    char names[512] = "auto";
    const char *name;
    for (int i = 1; (name = cltopk_algo_name((cltopk_algo)i)) != NULL; i++) {
        size_t o = strlen(names);
        snprintf(names + o, sizeof names - o, ", %s", name);
    }
    return usage_error(cmd, "unknown algorithm '%s' (use %s)", s, names);
}

int known_dist(const char *s)
{
    return gen_dist_index(gen_dists, s) >= 0 || gen_dist_index(gen_table_dists, s) >= 0;
}

/* ------------------------------------------------------------------ values */

static int lower_eq(const char *s, const char *word)
{
    for (; *word; s++, word++)
        if (tolower((unsigned char)*s) != *word)
            return 0;
    return *s == 0;
}

static int lower_prefix(const char *s, const char *word)
{
    for (; *word; s++, word++)
        if (tolower((unsigned char)*s) != *word)
            return 0;
    return 1;
}

static int parse_float(int f64, const char *s, uint64_t *bits, const char **why)
{
    const char *p = s;
    int neg = 0;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    uint64_t sign = neg ? (f64 ? 1ull << 63 : 1ull << 31) : 0;
    uint64_t exp_all = f64 ? 0x7FF0000000000000ull : 0x7F800000ull;
    uint64_t mant_mask = f64 ? 0x000FFFFFFFFFFFFFull : 0x007FFFFFull;
    if (lower_eq(p, "inf") || lower_eq(p, "infinity")) {
        *bits = sign | exp_all;
        return 0;
    }
    if (lower_eq(p, "nan")) {
        *bits = sign | exp_all | (mant_mask + 1) >> 1;
        return 0;
    }
    if (lower_prefix(p, "nan(")) {
        uint64_t payload;
        char buf[40];
        size_t len = strlen(p + 4);
        if (len < 2 || len >= sizeof buf || p[4 + len - 1] != ')') {
            *why = "a NaN payload is written nan(0xHEX)";
            return -1;
        }
        memcpy(buf, p + 4, len - 1);
        buf[len - 1] = 0;
        if (parse_u64(buf, &payload) < 0 || payload == 0 || payload > mant_mask) {
            *why = f64 ? "a NaN payload must be 1 .. 0xfffffffffffff"
                       : "a NaN payload must be 1 .. 0x7fffff";
            return -1;
        }
        *bits = sign | exp_all | payload;
        return 0;
    }
    /* a number must start with a digit or a point after the sign */
    if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1]))) {
        *why = "not a number";
        return -1;
    }
    char *end;
    errno = 0;
    if (f64) {
        double d = strtod(s, &end);
        if (*end) {
            *why = "not a number";
            return -1;
        }
        if (errno == ERANGE && isinf(d)) {
            *why = "out of range for f64 (largest finite: 1.7976931348623157e+308)";
            return -1;
        }
        memcpy(bits, &d, 8);
    } else {
        float f = strtof(s, &end);
        uint32_t x;
        if (*end) {
            *why = "not a number";
            return -1;
        }
        if (errno == ERANGE && isinf(f)) {
            *why = "out of range for f32 (largest finite: 3.40282347e+38)";
            return -1;
        }
        memcpy(&x, &f, 4);
        *bits = x;
    }
    return 0;
}

static int parse_int(cltopk_dtype t, const char *s, uint64_t *bits, const char **why)
{
    const char *p = s;
    int neg = 0, base = 10;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        p += 2, base = 16;
    if (!(base == 16 ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p))) {
        *why = "not an integer";
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p, &end, base);
    if (*end) {
        *why = "not an integer";
        return -1;
    }
    uint64_t maxpos, maxneg; /* largest magnitude allowed for each sign */
    switch (t) {
    case CLTOPK_INT32: maxpos = INT32_MAX, maxneg = (uint64_t)INT32_MAX + 1; break;
    case CLTOPK_UINT32: maxpos = UINT32_MAX, maxneg = 0; break;
    case CLTOPK_INT64: maxpos = INT64_MAX, maxneg = (uint64_t)INT64_MAX + 1; break;
    default: maxpos = UINT64_MAX, maxneg = 0; break;
    }
    if (errno == ERANGE || v > (neg ? maxneg : maxpos)) {
        switch (t) {
        case CLTOPK_INT32: *why = "out of range for i32 (-2147483648 .. 2147483647)"; break;
        case CLTOPK_UINT32: *why = "out of range for u32 (0 .. 4294967295)"; break;
        case CLTOPK_INT64:
            *why = "out of range for i64 (-9223372036854775808 .. 9223372036854775807)";
            break;
        default: *why = "out of range for u64 (0 .. 18446744073709551615)"; break;
        }
        return -1;
    }
    uint64_t x = neg ? 0 - (uint64_t)v : (uint64_t)v;
    *bits = cltopk_dtype_size(t) == 4 ? (uint32_t)x : x;
    return 0;
}

int parse_value(cltopk_dtype t, const char *s, uint64_t *bits, const char **why)
{
    switch (t) {
    case CLTOPK_FLOAT32: return parse_float(0, s, bits, why);
    case CLTOPK_FLOAT64: return parse_float(1, s, bits, why);
    case CLTOPK_INT32: case CLTOPK_UINT32: case CLTOPK_INT64: case CLTOPK_UINT64:
        return parse_int(t, s, bits, why);
    default:
        *why = "unknown type";
        return -1;
    }
}

/* NaN text: "nan" / "-nan" for the default quiet NaN, else nan(0xPAYLOAD) */
static int format_nan(int f64, uint64_t bits, char *buf, size_t len)
{
    uint64_t exp_all = f64 ? 0x7FF0000000000000ull : 0x7F800000ull;
    uint64_t mant_mask = f64 ? 0x000FFFFFFFFFFFFFull : 0x007FFFFFull;
    uint64_t sign = f64 ? bits >> 63 : (bits >> 31) & 1;
    uint64_t mant = bits & mant_mask;
    if ((bits & exp_all) != exp_all || mant == 0)
        return 0;
    if (mant == (mant_mask + 1) >> 1)
        snprintf(buf, len, "%snan", sign ? "-" : "");
    else
        snprintf(buf, len, "%snan(0x%" PRIx64 ")", sign ? "-" : "", mant);
    return 1;
}

void format_value(cltopk_dtype t, uint64_t bits, char *buf, size_t len)
{
    switch (t) {
    case CLTOPK_FLOAT32: {
        float f;
        uint32_t x = (uint32_t)bits;
        memcpy(&f, &x, 4);
        if (!format_nan(0, x, buf, len))
            snprintf(buf, len, "%.9g", (double)f);
        break;
    }
    case CLTOPK_FLOAT64: {
        double d;
        memcpy(&d, &bits, 8);
        if (!format_nan(1, bits, buf, len))
            snprintf(buf, len, "%.17g", d);
        break;
    }
    case CLTOPK_INT32: snprintf(buf, len, "%" PRId32, (int32_t)(uint32_t)bits); break;
    case CLTOPK_UINT32: snprintf(buf, len, "%" PRIu32, (uint32_t)bits); break;
    case CLTOPK_INT64: snprintf(buf, len, "%" PRId64, (int64_t)bits); break;
    default: snprintf(buf, len, "%" PRIu64, bits); break;
    }
}

void format_value_json(cltopk_dtype t, uint64_t bits, char *buf, size_t len)
{
    char tmp[64];
    format_value(t, bits, tmp, sizeof tmp);
    int is_float = t == CLTOPK_FLOAT32 || t == CLTOPK_FLOAT64;
    if (is_float && (strstr(tmp, "nan") || strstr(tmp, "inf")))
        snprintf(buf, len, "\"%s\"", tmp);
    else
        snprintf(buf, len, "%s", tmp);
}

/* ------------------------------------------------------------ input/output */

static int host_is_little_endian(void)
{
    uint16_t x = 1;
    unsigned char c;
    memcpy(&c, &x, 1);
    return c == 1;
}

void to_little_endian(void *a, size_t bytes, size_t n)
{
    if (host_is_little_endian())
        return;
    unsigned char *p = a;
    for (size_t i = 0; i < n; i++, p += bytes)
        for (size_t j = 0; j < bytes / 2; j++) {
            unsigned char c = p[j];
            p[j] = p[bytes - 1 - j];
            p[bytes - 1 - j] = c;
        }
}

const char *display_name(const char *path)
{
    return strcmp(path, "-") ? path : "<stdin>";
}

int read_whole_file(const char *cmd, const char *path, char **buf, size_t *len)
{
    int from_stdin = !strcmp(path, "-");
    FILE *f = from_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return fail(cmd, "cannot open '%s': %s", path, strerror(errno));
    size_t cap = 1 << 16, used = 0;
    char *b = malloc(cap);
    int rc = 0;
    while (b) {
        if (used == cap) {
            char *nb = cap <= SIZE_MAX / 2 ? realloc(b, cap * 2) : NULL;
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
        size_t got = fread(b + used, 1, cap - used, f);
        used += got;
        if (got == 0)
            break;
    }
    if (!b) {
        rc = fail(cmd, "out of memory reading '%s'", display_name(path));
    } else if (ferror(f)) {
        rc = fail(cmd, "cannot read '%s': %s", display_name(path), strerror(errno));
        free(b);
    }
    if (!from_stdin)
        fclose(f);
    if (rc)
        return rc;
    *buf = b;
    *len = used;
    return 0;
}

static int has_suffix_nocase(const char *path, const char *suffix)
{
    size_t lp = strlen(path), ls = strlen(suffix);
    if (lp <= ls || path[lp - ls - 1] == '/')
        return 0; /* ".txt" alone is a hidden file's name, not an extension */
    for (size_t i = 0; i < ls; i++)
        if (tolower((unsigned char)path[lp - ls + i]) != suffix[i])
            return 0;
    return 1;
}

int file_format(const char *path, int asked)
{
    if (asked != FORMAT_AUTO)
        return asked;
    return has_suffix_nocase(path, ".txt") || has_suffix_nocase(path, ".csv") ? FORMAT_TEXT
                                                                              : FORMAT_BINARY;
}

const char *format_reason(const char *path, int asked)
{
    if (asked == FORMAT_TEXT)
        return "--text";
    if (asked == FORMAT_BINARY)
        return "--binary";
    if (has_suffix_nocase(path, ".txt"))
        return "the .txt name";
    if (has_suffix_nocase(path, ".csv"))
        return "the .csv name";
    return "the default; --text reads text";
}

static int parse_text(const char *cmd, const char *path, cltopk_dtype t, char *b, size_t len,
                      void **data, size_t *n)
{
    size_t bytes = cltopk_dtype_size(t), lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += b[i] == '\n';
    char *out = malloc(lines * bytes);
    if (!out)
        return fail(cmd, "out of memory for %zu values of '%s'", lines, display_name(path));
    size_t count = 0, lineno = 0;
    char *p = b, *end = b + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *e = nl ? nl : end;
        lineno++;
        /* trim blanks both sides */
        char *s = p;
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r'))
            s++;
        char *z = e;
        while (z > s && (z[-1] == ' ' || z[-1] == '\t' || z[-1] == '\r'))
            z--;
        p = nl ? nl + 1 : end;
        if (z == s || *s == '#')
            continue;
        if (memchr(s, 0, (size_t)(z - s))) {
            free(out);
            return fail(cmd, "%s line %zu: a NUL byte in the line: not a text file? (then "
                        "give --binary)", display_name(path), lineno);
        }
        *z = 0;
        uint64_t bits;
        const char *why = "";
        if (parse_value(t, s, &bits, &why) < 0) {
            if (strlen(s) > 60)
                strcpy(s + 57, "...");
            free(out);
            return fail(cmd, "%s line %zu: '%s' is not a valid %s: %s", display_name(path),
                        lineno, s, cltopk_dtype_name(t), why);
        }
        if (bytes == 4) {
            uint32_t x = (uint32_t)bits;
            memcpy(out + count * 4, &x, 4);
        } else {
            memcpy(out + count * 8, &bits, 8);
        }
        count++;
    }
    *data = out;
    *n = count;
    return 0;
}

int read_elements(const char *cmd, const char *path, cltopk_dtype t, const char *type_hint,
                  int *format, void **data, size_t *n)
{
    char *b = NULL;
    size_t len = 0, bytes = cltopk_dtype_size(t);
    int rc = read_whole_file(cmd, path, &b, &len);
    if (rc)
        return rc;
    *format = file_format(path, *format);
    if (*format == FORMAT_TEXT) {
        rc = parse_text(cmd, path, t, b, len, data, n);
        free(b);
        return rc;
    }
    if (len % bytes) {
        free(b);
        return fail(cmd,
                    "'%s' holds %zu bytes, not a whole number of %zu-byte %s elements (read "
                    "as raw little-endian binary): %s",
                    display_name(path), len, bytes, cltopk_dtype_name(t), type_hint);
    }
    to_little_endian(b, bytes, len / bytes);
    *data = b;
    *n = len / bytes;
    return 0;
}

/* ----------------------------------------------------------- output files */

const char *out_name(const char *path)
{
    return strcmp(path, "-") ? path : "<stdout>";
}

/* the temporary file to remove if a signal ends the command while it exists */
static char *volatile pending_tmp;
static struct sigaction saved_actions[3];
static const int cleanup_signals[3] = {SIGHUP, SIGINT, SIGTERM};

static void remove_pending(int sig)
{
    char *t = pending_tmp;
    if (t)
        unlink(t);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void watch_tmp(char *tmp)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_pending;
    sigemptyset(&sa.sa_mask);
    pending_tmp = tmp;
    for (int i = 0; i < 3; i++)
        if (sigaction(cleanup_signals[i], &sa, &saved_actions[i]) != 0)
            saved_actions[i].sa_handler = SIG_DFL;
}

static void unwatch_tmp(void)
{
    if (!pending_tmp)
        return;
    for (int i = 0; i < 3; i++)
        sigaction(cleanup_signals[i], &saved_actions[i], NULL);
    pending_tmp = NULL;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static int refuse_terminal(const char *cmd, unsigned flags)
{
    return usage_error(cmd, "refusing to write binary data to a terminal; redirect it or give "
                       "a file name%s", flags & OUT_CAN_TEXT ? ", or give --text" : "");
}

int out_check(const char *cmd, const char *path, unsigned flags, const char *input)
{
    struct stat in, out;
    int have_in = 0;
    if (input)
        have_in = (!strcmp(input, "-") ? fstat(STDIN_FILENO, &in) : stat(input, &in)) == 0 &&
                  S_ISREG(in.st_mode);
    if (!strcmp(path, "-")) {
        if ((flags & OUT_BINARY) && isatty(STDOUT_FILENO))
            return refuse_terminal(cmd, flags);
        /* a shell's >> onto the input: nothing can be renamed there */
        if (have_in && fstat(STDOUT_FILENO, &out) == 0 && same_file(&in, &out))
            return usage_error(cmd, "standard output is the input file '%s'; write to "
                               "another file", display_name(input));
        return 0;
    }
    struct stat l;
    if (lstat(path, &l) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0; /* a new file: out_open says what is wrong with its directory */
        return fail(cmd, "cannot write '%s': %s", path, strerror(errno));
    }
    if (stat(path, &out) != 0) {
        if (S_ISLNK(l.st_mode) && errno == ENOENT)
            return fail(cmd, "cannot write '%s': it is a symbolic link to a file that does not "
                        "exist; give that file's name, or remove the link", path);
        return fail(cmd, "cannot write '%s': %s", path, strerror(errno));
    }
    if (S_ISDIR(out.st_mode))
        return fail(cmd, "cannot write '%s': it is a directory; give a file name", path);
    if (have_in && same_file(&in, &out) && !(flags & OUT_IN_PLACE))
        return usage_error(cmd, "the output '%s' is the input file; give another output, or "
                           "--in-place to replace the input", path);
    /* replacing by rename needs only the directory: keep the file's own say */
    if (S_ISREG(out.st_mode) && access(path, W_OK) != 0)
        return fail(cmd, "cannot write '%s': %s", path, strerror(errno));
    return 0;
}

/* the directory part of path ("." when it has none), malloc'd */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(len + 1);
    if (d) {
        memcpy(d, path, len);
        d[len] = 0;
    }
    return d;
}

int out_open(out_file *o, const char *cmd, const char *path, unsigned flags, const char *input)
{
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    o->path = path;
    int rc = out_check(cmd, path, flags, input);
    if (rc)
        return rc;
    if (!strcmp(path, "-")) {
        o->f = stdout;
        return 0;
    }
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
        /* a device or a FIFO: written in place, never replaced or removed */
        o->f = fopen(path, "wb");
        if (!o->f)
            return fail(cmd, "cannot open '%s' for writing: %s", path, strerror(errno));
        if ((flags & OUT_BINARY) && isatty(fileno(o->f))) {
            fclose(o->f);
            o->f = NULL;
            return refuse_terminal(cmd, flags);
        }
        return 0;
    }
    /* a regular file (through any links) or a new one: a temporary beside it */
    char resolved[PATH_MAX];
    const char *target = path;
    if (exists) {
        if (!realpath(path, resolved))
            return fail(cmd, "cannot resolve '%s': %s", path, strerror(errno));
        target = resolved;
    }
    char *dir = dir_of(target);
    const char *base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
    o->target = strdup(target);
    o->tmp = dir ? malloc(strlen(dir) + strlen(base) + 16) : NULL;
    if (!dir || !o->target || !o->tmp) {
        free(dir);
        out_abort(o);
        return fail(cmd, "out of memory");
    }
    sprintf(o->tmp, "%s/.%s.XXXXXX", dir, base);
    free(dir);
    mode_t mask = umask(0);
    umask(mask);
    mode_t mode = exists ? st.st_mode & 0777 : 0666 & ~mask;
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL;
        out_abort(o);
        if (exists)
            return fail(cmd, "cannot create a temporary file beside '%s' to replace it "
                        "safely: %s", path, strerror(e));
        return fail(cmd, "cannot create '%s': %s", path, strerror(e));
    }
    watch_tmp(o->tmp);
    if (fchmod(fd, mode) != 0) {
        int e = errno;
        close(fd);
        out_abort(o);
        return fail(cmd, "cannot set the permissions of '%s': %s", path, strerror(e));
    }
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        int e = errno;
        close(fd);
        out_abort(o);
        return fail(cmd, "cannot write '%s': %s", path, strerror(e));
    }
    return 0;
}

int out_write(out_file *o, const void *buf, size_t len)
{
    if (len && fwrite(buf, 1, len, o->f) != len) {
        int e = errno;
        out_abort(o);
        return fail(o->cmd, "cannot write '%s': %s", out_name(o->path), strerror(e));
    }
    return 0;
}

int out_commit(out_file *o)
{
    int e = 0, bad = ferror(o->f);
    if (bad)
        e = errno ? errno : EIO;
    if (fflush(o->f) != 0 && !bad)
        bad = 1, e = errno;
    if (o->tmp && !bad && fsync(fileno(o->f)) != 0 && errno != EINVAL && errno != EROFS)
        bad = 1, e = errno;
    if (o->f != stdout) {
        if (fclose(o->f) != 0 && !bad)
            bad = 1, e = errno;
        o->f = NULL;
    }
    if (!bad && o->tmp && rename(o->tmp, o->target) != 0)
        bad = 1, e = errno;
    if (bad) {
        out_abort(o);
        return fail(o->cmd, "cannot write '%s': %s", out_name(o->path), strerror(e));
    }
    unwatch_tmp();
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    return 0;
}

void out_abort(out_file *o)
{
    if (o->f && o->f != stdout)
        fclose(o->f);
    o->f = NULL;
    if (o->tmp)
        unlink(o->tmp);
    unwatch_tmp();
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
}

void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static int progress_on = -1; /* -1: not yet asked */
static int progress_shown;

void progress(const char *fmt, ...)
{
    if (progress_on < 0)
        progress_on = isatty(STDERR_FILENO);
    if (!progress_on)
        return;
    char line[100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\r%-79.79s", line);
    fflush(stderr);
    progress_shown = 1;
}

void progress_done(void)
{
    if (!progress_shown)
        return;
    fprintf(stderr, "\r%79s\r", "");
    fflush(stderr);
    progress_shown = 0;
}

double cli_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_seconds(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_seconds);
    return v[n / 2];
}
