/* cli.c - helpers shared by the subcommands of `cltopk` (see cli.h). */
#include "cli.h"
#include "gen.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

int open_device(const char *cmd, const char *spec, cltopk_context **ctx)
{
    int st = cltopk_open(ctx, spec);
    if (st != CLTOPK_OK) {
        char what[300];
        snprintf(what, sizeof what, "cannot open device \"%s\"", spec ? spec : "auto");
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
    return usage_error(cmd,
                       "unknown algorithm '%s' (use auto, bitonic, sbp-radix, sbp-tree, "
                       "radix-select, cpu-heap, cpu-bitonic or cpu-radix; also named, not in "
                       "this version: sort)",
                       s);
}

int known_dist(const char *s)
{
    for (int i = 0; gen_dists[i]; i++)
        if (!strcmp(s, gen_dists[i]))
            return 1;
    return 0;
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

static int looks_like_text(const char *b, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)b[i];
        if (!(c >= 0x20 && c < 0x7F) && c != '\n' && c != '\r' && c != '\t')
            return 0;
    }
    return 1;
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

int read_elements(const char *cmd, const char *path, cltopk_dtype t, int *format, void **data,
                  size_t *n)
{
    char *b = NULL;
    size_t len = 0, bytes = cltopk_dtype_size(t);
    int rc = read_whole_file(cmd, path, &b, &len);
    if (rc)
        return rc;
    if (*format == FORMAT_AUTO)
        *format = len > 0 && looks_like_text(b, len) ? FORMAT_TEXT : FORMAT_BINARY;
    if (*format == FORMAT_TEXT) {
        rc = parse_text(cmd, path, t, b, len, data, n);
        free(b);
        return rc;
    }
    if (len % bytes) {
        free(b);
        return fail(cmd,
                    "'%s' holds %zu bytes, not a whole number of %zu-byte %s elements (wrong "
                    "-t, or a text file: then give --text)",
                    display_name(path), len, bytes, cltopk_dtype_name(t));
    }
    to_little_endian(b, bytes, len / bytes);
    *data = b;
    *n = len / bytes;
    return 0;
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
