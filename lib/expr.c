/* expr.c - parse, check and compile the expressions of cltopk_query_topk
 * (lib/expr.h); and cltopk's own log and exp, whose operations cl/query.cl
 * repeats one for one.
 *
 * Grammar (loosest first):
 *   cond    := and ("or" and)*
 *   and     := not ("and" not)*
 *   not     := "not" not | cmp
 *   cmp     := sum [("<" | "<=" | ">" | ">=" | "==" | "!=") sum]
 *   sum     := product (("+" | "-") product)*
 *   product := unary (("*" | "/") unary)*
 *   unary   := "-" unary | primary
 *   primary := literal | column | function "(" cond ("," cond)* ")" | "(" cond ")"
 * Literals: decimal or 0x hexadecimal integers (up to 2^64 - 1; a minus sign
 * before one makes a negative integer literal), decimals with a point or an
 * exponent.  Functions: min max (two numbers), abs sqrt log exp floor ceil
 * (one), if (a condition and two numbers). */
#define _GNU_SOURCE
#include "expr.h"

#include <ctype.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* no fused multiply-add where the source has a product and a sum: the device
 * evaluates the same operations one rounding each */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

enum { T_NUM, T_BOOL };
enum {
    N_LITF, /* a decimal literal (text kept: rounded once to the score type) */
    N_LITI, /* an integer literal */
    N_COL,
    N_BIN,  /* op: XOP_ADD .. XOP_DIV */
    N_NEG,
    N_CALL, /* op: XOP_MIN .. XOP_CEIL */
    N_CMP,  /* op: XCMP_* */
    N_AND, N_OR, N_NOT,
    N_IF
};

typedef struct node {
    int kind, op, pos, type;
    struct node *a[3];
    int col;            /* N_COL: the caller's column */
    uint64_t bits;      /* N_LITI: magnitude bits (two's complement when neg) */
    int neg;            /* N_LITI: negative */
    const char *text;   /* N_LITF: the literal's text, len bytes */
    int len;
} node;

typedef struct {
    const char *what; /* "order_by" or "where" */
    const char *s;
    size_t i;
    const expr_col *cols;
    int ncols;
    char *err;
    size_t errlen;
    int failed;
    node pool[2 * EXPR_MAX_OPS];
    int npool;
    int depth;
} parser;

static void fail(parser *p, size_t at, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = 1;
    int n = snprintf(p->err, p->errlen, "%s: at %zu: ", p->what, at + 1);
    if (n < 0 || (size_t)n >= p->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

static node *mk(parser *p, int kind, int pos)
{
    if (p->npool >= (int)(sizeof p->pool / sizeof p->pool[0])) {
        fail(p, (size_t)pos, "the expression is too long (at most %d operations)",
             EXPR_MAX_OPS);
        return NULL;
    }
    node *x = &p->pool[p->npool++];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->pos = pos;
    return x;
}

/* the first byte at or after i that is not a blank */
static size_t past_space(const char *s, size_t i)
{
    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
        i++;
    return i;
}

static void skip_space(parser *p)
{
    p->i = past_space(p->s, p->i);
}

static int is_name_start(int c)
{
    return isalpha(c) || c == '_';
}

static int is_name_char(int c)
{
    return isalnum(c) || c == '_';
}

/* the word at p->i (a name), its length (0: none) */
static size_t word_len(const parser *p)
{
    size_t j = p->i;
    if (!is_name_start((unsigned char)p->s[j]))
        return 0;
    while (is_name_char((unsigned char)p->s[j]))
        j++;
    return j - p->i;
}

static int word_is(const parser *p, const char *w)
{
    size_t n = word_len(p);
    return n == strlen(w) && strncmp(p->s + p->i, w, n) == 0;
}

/* what is found at p->i, for messages */
static void found(const parser *p, char *buf, size_t len)
{
    const char *t = p->s + p->i;
    if (!*t) {
        snprintf(buf, len, "the end");
        return;
    }
    size_t n = word_len(p);
    if (n == 0) {
        unsigned char c = (unsigned char)*t;
        if (isprint(c))
            snprintf(buf, len, "'%c'", c);
        else
            snprintf(buf, len, "the byte 0x%02X", c);
        return;
    }
    snprintf(buf, len, "'%.*s'", (int)(n < 40 ? n : 40), t);
}

static const char *const reserved[] = {"and", "or", "not", "if", "min", "max", "abs",
                                       "sqrt", "log", "exp", "floor", "ceil", NULL};

static node *parse_cond(parser *p);


static int type_of_col(const parser *p, int c)
{
    return p->cols[c].type;
}

static int col_is_int(const parser *p, int c)
{
    int t = type_of_col(p, c);
    return t != 0 && t != 1; /* not CLTOPK_FLOAT32 / CLTOPK_FLOAT64 */
}

/* a number literal at p->i */
static node *parse_number(parser *p, int negate)
{
    size_t at = p->i;
    const char *s = p->s + at;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        size_t j = 2;
        uint64_t v = 0;
        if (!isxdigit((unsigned char)s[j])) {
            fail(p, at, "a hexadecimal literal needs digits after 0x");
            return NULL;
        }
        for (; isxdigit((unsigned char)s[j]); j++) {
            int d = isdigit((unsigned char)s[j]) ? s[j] - '0' : (tolower((unsigned char)s[j]) - 'a' + 10);
            if (v >> 60) {
                fail(p, at, "the integer literal is larger than 2^64 - 1");
                return NULL;
            }
            v = v << 4 | (uint64_t)d;
        }
        if (is_name_char((unsigned char)s[j]) || s[j] == '.') {
            fail(p, at + j, "unexpected '%c' in a hexadecimal literal", s[j]);
            return NULL;
        }
        node *x = mk(p, N_LITI, (int)at);
        if (!x)
            return NULL;
        x->bits = v;
        p->i = at + j;
        if (negate) {
            if (v > (uint64_t)1 << 63) {
                fail(p, at, "the negative integer literal is smaller than -2^63");
                return NULL;
            }
            x->neg = v != 0;
            x->bits = (uint64_t)0 - v;
        }
        x->type = T_NUM;
        return x;
    }
    size_t j = 0;
    int dec = 0;
    while (isdigit((unsigned char)s[j]))
        j++;
    if (s[j] == '.') {
        dec = 1;
        j++;
        while (isdigit((unsigned char)s[j]))
            j++;
    }
    if (j == 1 && s[0] == '.') {
        fail(p, at, "a decimal point needs digits");
        return NULL;
    }
    if (s[j] == 'e' || s[j] == 'E') {
        size_t e = j + 1;
        if (s[e] == '+' || s[e] == '-')
            e++;
        if (!isdigit((unsigned char)s[e])) {
            fail(p, at + j, "an exponent needs digits");
            return NULL;
        }
        while (isdigit((unsigned char)s[e]))
            e++;
        j = e;
        dec = 1;
    }
    if (is_name_char((unsigned char)s[j]) || s[j] == '.') {
        fail(p, at + j, "unexpected '%c' after a number", s[j]);
        return NULL;
    }
    if (dec) {
        node *x = mk(p, N_LITF, (int)at);
        if (!x)
            return NULL;
        x->text = s;
        x->len = (int)j;
        x->neg = negate;
        x->type = T_NUM;
        p->i = at + j;
        return x;
    }
    uint64_t v = 0;
    for (size_t d = 0; d < j; d++) {
        uint64_t dig = (uint64_t)(s[d] - '0');
        if (v > (UINT64_MAX - dig) / 10) {
            fail(p, at, "the integer literal is larger than 2^64 - 1");
            return NULL;
        }
        v = v * 10 + dig;
    }
    node *x = mk(p, N_LITI, (int)at);
    if (!x)
        return NULL;
    x->bits = v;
    if (negate) {
        if (v > (uint64_t)1 << 63) {
            fail(p, at, "the negative integer literal is smaller than -2^63");
            return NULL;
        }
        x->neg = v != 0;
        x->bits = (uint64_t)0 - v;
    }
    x->type = T_NUM;
    p->i = at + j;
    return x;
}

static void expect_type(parser *p, const node *x, int type)
{
    if (!x || p->failed)
        return;
    if (x->type != type)
        fail(p, (size_t)x->pos, type == T_NUM ? "expected a number, found a condition"
                                               : "expected a condition (a comparison), "
                                                 "found a number");
}

/* one level deeper, at byte `at`: 0 (and failed) past EXPR_MAX_DEPTH */
static int deeper(parser *p, size_t at)
{
    if (++p->depth <= EXPR_MAX_DEPTH)
        return 1;
    fail(p, at, "the expression nests deeper than %d", EXPR_MAX_DEPTH);
    return 0;
}

/* the operator of a left-associative level at p->i: its length (0: none),
 * the node's kind and operation */
typedef int (*op_at_fn)(const parser *p, int *kind, int *op);
typedef node *(*parse_fn)(parser *p);

/* operands by `next`, of type `type`, joined left to right while op_at
 * finds an operator */
static node *parse_level(parser *p, parse_fn next, op_at_fn op_at, int type)
{
    node *x = next(p);
    for (;;) {
        if (!x)
            return NULL;
        skip_space(p);
        int kind, op, len = op_at(p, &kind, &op);
        if (!len)
            return x;
        node *y = mk(p, kind, (int)p->i);
        if (!y)
            return NULL;
        p->i += (size_t)len;
        y->op = op;
        y->a[0] = x;
        y->a[1] = next(p);
        if (!y->a[1])
            return NULL;
        expect_type(p, x, type);
        expect_type(p, y->a[1], type);
        y->type = type;
        x = p->failed ? NULL : y;
    }
}

static node *parse_primary(parser *p)
{
    skip_space(p);
    size_t at = p->i;
    char c = p->s[at];
    char what[64];
    if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)p->s[at + 1])))
        return parse_number(p, 0);
    if (c == '(') {
        p->i++;
        node *x = parse_cond(p);
        if (!x)
            return NULL;
        skip_space(p);
        if (p->s[p->i] != ')') {
            found(p, what, sizeof what);
            fail(p, p->i, "expected ')' (to close the '(' at %zu), found %s", at + 1, what);
            return NULL;
        }
        p->i++;
        return x;
    }
    size_t n = word_len(p);
    if (n == 0) {
        found(p, what, sizeof what);
        fail(p, at, "expected a number, a column, a function or '(', found %s", what);
        return NULL;
    }
    static const struct {
        const char *name;
        int op, nargs;
    } fns[] = {{"min", XOP_MIN, 2},   {"max", XOP_MAX, 2},     {"abs", XOP_ABS, 1},
               {"sqrt", XOP_SQRT, 1}, {"log", XOP_LOG, 1},     {"exp", XOP_EXP, 1},
               {"floor", XOP_FLOOR, 1}, {"ceil", XOP_CEIL, 1}, {"if", 0, 3}};
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
        if (!word_is(p, fns[f].name))
            continue;
        p->i += n;
        skip_space(p);
        if (p->s[p->i] != '(') {
            found(p, what, sizeof what);
            fail(p, p->i, "expected '(' after %s, found %s", fns[f].name, what);
            return NULL;
        }
        p->i++;
        node *x = mk(p, fns[f].op ? N_CALL : N_IF, (int)at);
        if (!x)
            return NULL;
        x->op = fns[f].op;
        for (int a = 0; a < fns[f].nargs; a++) {
            if (a) {
                skip_space(p);
                if (p->s[p->i] != ',') {
                    found(p, what, sizeof what);
                    fail(p, p->i, "%s takes %d arguments: expected ',', found %s",
                         fns[f].name, fns[f].nargs, what);
                    return NULL;
                }
                p->i++;
            }
            x->a[a] = parse_cond(p);
            if (!x->a[a])
                return NULL;
            expect_type(p, x->a[a], fns[f].op == 0 && a == 0 ? T_BOOL : T_NUM);
        }
        skip_space(p);
        if (p->s[p->i] != ')') {
            found(p, what, sizeof what);
            fail(p, p->i, "%s takes %d argument%s: expected ')', found %s", fns[f].name,
                 fns[f].nargs, fns[f].nargs == 1 ? "" : "s", what);
            return NULL;
        }
        p->i++;
        x->type = T_NUM;
        return p->failed ? NULL : x;
    }
    for (int r = 0; reserved[r]; r++)
        if (word_is(p, reserved[r])) {
            fail(p, at, "expected a number, a column, a function or '(', found the word "
                        "'%s'", reserved[r]);
            return NULL;
        }
    for (int col = 0; col < p->ncols; col++)
        if (strlen(p->cols[col].name) == n && strncmp(p->cols[col].name, p->s + at, n) == 0) {
            node *x = mk(p, N_COL, (int)at);
            if (!x)
                return NULL;
            x->col = col;
            x->type = T_NUM;
            p->i += n;
            return x;
        }
    /* unknown: a name called as a function lists the functions, any other
     * name the columns */
    if (p->s[past_space(p->s, at + n)] == '(') {
        int w = snprintf(p->err, p->errlen, "%s: at %zu: unknown function '%.*s'; functions are:",
                         p->what, at + 1, (int)(n < 64 ? n : 64), p->s + at);
        for (size_t f = 0; f < sizeof fns / sizeof fns[0] && w > 0 && (size_t)w < p->errlen; f++)
            w += snprintf(p->err + w, p->errlen - (size_t)w, "%s %s", f ? "," : "", fns[f].name);
        p->failed = 1;
        return NULL;
    }
    int w = snprintf(p->err, p->errlen, "%s: at %zu: unknown column '%.*s'; columns are:",
                     p->what, at + 1, (int)(n < 64 ? n : 64), p->s + at);
    for (int col = 0; col < p->ncols && w > 0 && (size_t)w < p->errlen; col++)
        w += snprintf(p->err + w, p->errlen - (size_t)w, "%s %s", col ? "," : "",
                      p->cols[col].name);
    if (p->ncols == 0 && w > 0 && (size_t)w < p->errlen)
        snprintf(p->err + w, p->errlen - (size_t)w, " (none)");
    p->failed = 1;
    return NULL;
}

static node *parse_unary(parser *p)
{
    skip_space(p);
    if (p->s[p->i] == '-') {
        size_t at = p->i;
        p->i++;
        skip_space(p);
        char c = p->s[p->i];
        if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)p->s[p->i + 1])))
            return parse_number(p, 1);
        if (!deeper(p, at))
            return NULL;
        node *x = mk(p, N_NEG, (int)at);
        if (!x || !(x->a[0] = parse_unary(p)))
            return NULL;
        p->depth--;
        expect_type(p, x->a[0], T_NUM);
        x->type = T_NUM;
        return p->failed ? NULL : x;
    }
    return parse_primary(p);
}

static int mul_at(const parser *p, int *kind, int *op)
{
    char c = p->s[p->i];
    *kind = N_BIN;
    *op = c == '*' ? XOP_MUL : XOP_DIV;
    return c == '*' || c == '/';
}

static int add_at(const parser *p, int *kind, int *op)
{
    char c = p->s[p->i];
    *kind = N_BIN;
    *op = c == '+' ? XOP_ADD : XOP_SUB;
    return c == '+' || c == '-';
}

static node *parse_product(parser *p)
{
    return parse_level(p, parse_unary, mul_at, T_NUM);
}

static node *parse_sum(parser *p)
{
    return parse_level(p, parse_product, add_at, T_NUM);
}

/* the comparison operator at p->i: its XCMP_ and length (0: none) */
static int cmp_at(const parser *p, int *op)
{
    const char *s = p->s + p->i;
    if (s[0] == '<' && s[1] == '=') return *op = XCMP_LE, 2;
    if (s[0] == '>' && s[1] == '=') return *op = XCMP_GE, 2;
    if (s[0] == '=' && s[1] == '=') return *op = XCMP_EQ, 2;
    if (s[0] == '!' && s[1] == '=') return *op = XCMP_NE, 2;
    if (s[0] == '<') return *op = XCMP_LT, 1;
    if (s[0] == '>') return *op = XCMP_GT, 1;
    return 0;
}

static node *parse_cmp(parser *p)
{
    node *x = parse_sum(p);
    if (!x)
        return NULL;
    skip_space(p);
    int op, len = cmp_at(p, &op);
    if (!len) {
        if (p->s[p->i] == '=') {
            fail(p, p->i, "'=' is not an operator: equality is '=='");
            return NULL;
        }
        return x;
    }
    node *y = mk(p, N_CMP, (int)p->i);
    if (!y)
        return NULL;
    p->i += (size_t)len;
    y->op = op;
    y->a[0] = x;
    y->a[1] = parse_sum(p);
    if (!y->a[1])
        return NULL;
    expect_type(p, x, T_NUM);
    expect_type(p, y->a[1], T_NUM);
    skip_space(p);
    if (cmp_at(p, &op)) {
        fail(p, p->i, "a comparison cannot follow a comparison: join them with 'and'");
        return NULL;
    }
    y->type = T_BOOL;
    return p->failed ? NULL : y;
}

static node *parse_not(parser *p)
{
    skip_space(p);
    if (word_is(p, "not")) {
        size_t at = p->i;
        p->i += 3;
        if (!deeper(p, at))
            return NULL;
        node *x = mk(p, N_NOT, (int)at);
        if (!x || !(x->a[0] = parse_not(p)))
            return NULL;
        p->depth--;
        expect_type(p, x->a[0], T_BOOL);
        x->type = T_BOOL;
        return p->failed ? NULL : x;
    }
    return parse_cmp(p);
}

static int and_at(const parser *p, int *kind, int *op)
{
    *kind = N_AND;
    *op = 0;
    return word_is(p, "and") ? 3 : 0;
}

static int or_at(const parser *p, int *kind, int *op)
{
    *kind = N_OR;
    *op = 0;
    return word_is(p, "or") ? 2 : 0;
}

static node *parse_and(parser *p)
{
    return parse_level(p, parse_not, and_at, T_BOOL);
}

static node *parse_cond(parser *p)
{
    if (!deeper(p, p->i))
        return NULL;
    node *x = parse_level(p, parse_and, or_at, T_BOOL);
    p->depth--;
    return x;
}

/* ------------------------------------------------------------ compiling */

typedef struct {
    expr_prog *prog;
    expr_query *q;
    parser *p;
    int sp; /* stack slots in use */
} emitter;

static void emit(emitter *e, int op, int arg, int push, int pop, int pos)
{
    if (e->p->failed)
        return;
    if (e->prog->nops >= EXPR_MAX_OPS) {
        fail(e->p, (size_t)pos, "the expression is too long (at most %d operations)",
             EXPR_MAX_OPS);
        return;
    }
    e->prog->ops[e->prog->nops++] = XOP_WORD(op, arg);
    e->sp += push - pop;
    if (e->sp > e->prog->depth)
        e->prog->depth = e->sp;
    if (e->prog->depth > EXPR_MAX_STACK)
        fail(e->p, (size_t)pos, "the expression needs more than %d stack slots: split it or "
                                "nest it less", EXPR_MAX_STACK);
}

static int add_const(emitter *e, uint64_t v, int pos)
{
    if (e->prog->nconsts >= (int)(sizeof e->prog->consts / sizeof e->prog->consts[0])) {
        fail(e->p, (size_t)pos, "too many constants");
        return 0;
    }
    e->prog->consts[e->prog->nconsts] = v;
    return e->prog->nconsts++;
}

/* the ref slot of caller's column c (added on first use) */
static int ref_of(emitter *e, int c, int pos)
{
    for (int r = 0; r < e->q->nrefs; r++)
        if (e->q->refs[r] == c)
            return r;
    if (e->q->nrefs >= EXPR_MAX_REFS) {
        fail(e->p, (size_t)pos, "the query uses more than %d distinct columns", EXPR_MAX_REFS);
        return 0;
    }
    e->q->refs[e->q->nrefs] = c;
    return e->q->nrefs++;
}

static locale_t c_locale(void)
{
    static locale_t loc;
    if (!loc)
        loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    return loc;
}

/* an integer term: a column of integers or an integer literal */
static int is_int_term(const parser *p, const node *x)
{
    return x->kind == N_LITI || (x->kind == N_COL && col_is_int(p, x->col));
}

static void gen(emitter *e, const node *x);

static void gen_num_of_int_lit(emitter *e, const node *x)
{
    uint64_t bits;
    if (e->q->score64) {
        double v = x->neg ? (double)(int64_t)x->bits : (double)x->bits;
        memcpy(&bits, &v, 8);
    } else {
        float v = x->neg ? (float)(int64_t)x->bits : (float)x->bits;
        uint32_t b;
        memcpy(&b, &v, 4);
        bits = b;
    }
    emit(e, XOP_CONF, add_const(e, bits, x->pos), 1, 0, x->pos);
}

static void gen(emitter *e, const node *x)
{
    if (e->p->failed)
        return;
    switch (x->kind) {
    case N_LITF: {
        char buf[128];
        if (x->len >= (int)sizeof buf - 1) {
            fail(e->p, (size_t)x->pos, "the literal is longer than %d characters",
                 (int)sizeof buf - 2);
            return;
        }
        buf[0] = '-';
        memcpy(buf + 1, x->text, (size_t)x->len);
        buf[x->len + 1] = 0;
        const char *t = x->neg ? buf : buf + 1;
        uint64_t bits;
        if (e->q->score64) {
            double v = strtod_l(t, NULL, c_locale());
            memcpy(&bits, &v, 8);
        } else {
            float v = strtof_l(t, NULL, c_locale());
            uint32_t b;
            memcpy(&b, &v, 4);
            bits = b;
        }
        emit(e, XOP_CONF, add_const(e, bits, x->pos), 1, 0, x->pos);
        return;
    }
    case N_LITI:
        gen_num_of_int_lit(e, x);
        return;
    case N_COL:
        emit(e, XOP_COLF, ref_of(e, x->col, x->pos), 1, 0, x->pos);
        return;
    case N_BIN:
        gen(e, x->a[0]);
        gen(e, x->a[1]);
        emit(e, x->op, 0, 1, 2, x->pos);
        return;
    case N_NEG:
        gen(e, x->a[0]);
        emit(e, XOP_NEG, 0, 1, 1, x->pos);
        return;
    case N_CALL:
        gen(e, x->a[0]);
        if (x->op == XOP_MIN || x->op == XOP_MAX) {
            gen(e, x->a[1]);
            emit(e, x->op, 0, 1, 2, x->pos);
        } else {
            emit(e, x->op, 0, 1, 1, x->pos);
        }
        return;
    case N_CMP:
        if (is_int_term(e->p, x->a[0]) && is_int_term(e->p, x->a[1])) {
            for (int i = 0; i < 2; i++) {
                const node *y = x->a[i];
                if (y->kind == N_COL) {
                    emit(e, XOP_COLI, ref_of(e, y->col, y->pos), 1, 0, y->pos);
                } else {
                    int c = add_const(e, y->bits, y->pos);
                    add_const(e, (uint64_t)y->neg, y->pos);
                    emit(e, XOP_CONI, c, 1, 0, y->pos);
                }
            }
            emit(e, XOP_CMPI, x->op, 1, 2, x->pos);
        } else {
            gen(e, x->a[0]);
            gen(e, x->a[1]);
            emit(e, XOP_CMPF, x->op, 1, 2, x->pos);
        }
        return;
    case N_AND:
    case N_OR:
        gen(e, x->a[0]);
        gen(e, x->a[1]);
        emit(e, x->kind == N_AND ? XOP_AND : XOP_OR, 0, 1, 2, x->pos);
        return;
    case N_NOT:
        gen(e, x->a[0]);
        emit(e, XOP_NOT, 0, 1, 1, x->pos);
        return;
    case N_IF:
        gen(e, x->a[0]);
        gen(e, x->a[1]);
        gen(e, x->a[2]);
        emit(e, XOP_SEL, 0, 1, 3, x->pos);
        return;
    }
}

/* parse and compile one expression into prog; 0 or -1 */
static int compile_one(const expr_col *cols, int ncols, const char *what, const char *text,
                       int want, expr_query *q, expr_prog *prog, char *err, size_t errlen)
{
    parser *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of host memory compiling %s", what);
        return -1;
    }
    p->what = what;
    p->s = text;
    p->cols = cols;
    p->ncols = ncols;
    p->err = err;
    p->errlen = errlen;
    size_t len = strnlen(text, EXPR_MAX_TEXT + 1);
    int st = -1;
    if (len > EXPR_MAX_TEXT) {
        /* at the first byte past the limit */
        fail(p, EXPR_MAX_TEXT, "the expression is longer than %d bytes", EXPR_MAX_TEXT);
        goto out;
    }
    skip_space(p);
    if (!p->s[p->i]) {
        /* at the end (past any blanks) */
        fail(p, p->i, "the expression is empty");
        goto out;
    }
    size_t start = p->i;
    node *root = parse_cond(p);
    if (!root)
        goto out;
    skip_space(p);
    if (p->s[p->i]) {
        char f[64];
        found(p, f, sizeof f);
        fail(p, p->i, "expected an operator or the end, found %s", f);
        goto out;
    }
    if (root->type != want) {
        fail(p, start, want == T_NUM ? "order_by must be a number, not a condition"
                                 : "where must be a condition (a comparison), not a number");
        goto out;
    }
    memset(prog, 0, sizeof *prog);
    emitter e = {prog, q, p, 0};
    gen(&e, root);
    if (!p->failed)
        st = 0;
out:
    free(p);
    return st;
}

int cltopk_expr_compile(const expr_col *cols, int ncols, const char *order_by,
                        const char *where, int score64, expr_query *q, char *err,
                        size_t errlen)
{
    memset(q, 0, sizeof *q);
    q->score64 = score64;
    if (!order_by) {
        snprintf(err, errlen, "order_by is NULL (a ranking expression is needed)");
        return -1;
    }
    if (compile_one(cols, ncols, "order_by", order_by, T_NUM, q, &q->order, err, errlen))
        return -1;
    if (where) {
        if (compile_one(cols, ncols, "where", where, T_BOOL, q, &q->where, err, errlen))
            return -1;
        q->has_where = 1;
    }
    return 0;
}

/* ------------------------------------------------------------ log and exp
 * The same operations in cl/query.cl (elog / eexp there).  exp: x = n ln 2 +
 * r by two constants (Cody and Waite), r in [-ln2/2, ln2/2], a Taylor
 * polynomial by Horner, scaled by 2^n.  log: x = m 2^e with m in [sqrt(1/2),
 * sqrt(2)), s = (m - 1) / (m + 1), log m = 2 (s + s^3/3 + ...), plus e ln 2. */

float cltopk_expr_expf(float x)
{
    if (isnan(x))
        return x;
    if (x > 0x1.62e43p+6f)
        return INFINITY;
    if (x < -0x1.9fe36ap+6f)
        return 0.0f;
    float n = floorf(x * 0x1.715476p+0f + 0.5f);
    float r = (x - n * 0x1.62e4p-1f) - n * 0x1.7f7d1cp-20f;
    float p = 0x1.a01a02p-13f;
    p = p * r + 0x1.6c16c2p-10f;
    p = p * r + 0x1.111112p-7f;
    p = p * r + 0x1.555556p-5f;
    p = p * r + 0x1.555556p-3f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    return ldexpf(p, (int)n);
}

float cltopk_expr_logf(float x)
{
    if (isnan(x) || x < 0.0f)
        return NAN;
    if (x == 0.0f)
        return -INFINITY;
    if (isinf(x))
        return x;
    int e;
    float m = frexpf(x, &e); /* [0.5, 1) */
    if (m < 0x1.6a09e6p-1f) {
        m = m * 2.0f;
        e = e - 1;
    }
    float s = (m - 1.0f) / (m + 1.0f), z = s * s;
    float p = 0x1.745d18p-4f;
    p = p * z + 0x1.c71c72p-4f;
    p = p * z + 0x1.24924ap-3f;
    p = p * z + 0x1.99999ap-3f;
    p = p * z + 0x1.555556p-2f;
    p = p * z + 1.0f;
    float lm = 2.0f * s * p;
    float fe = (float)e;
    return (fe * 0x1.62e4p-1f + lm) + fe * 0x1.7f7d1cp-20f;
}

/* 1/13! .. 1/3!, 1/2, 1, 1 */
static const double exp_coef[14] = {
    0x1.6124613a86d09p-33, 0x1.1eed8eff8d898p-29, 0x1.ae64567f544e4p-26,
    0x1.27e4fb7789f5cp-22, 0x1.71de3a556c734p-19, 0x1.a01a01a01a01ap-16,
    0x1.a01a01a01a01ap-13, 0x1.6c16c16c16c17p-10, 0x1.1111111111111p-7,
    0x1.5555555555555p-5,  0x1.5555555555555p-3,  0.5,
    1.0,                   1.0};

double cltopk_expr_exp(double x)
{
    if (isnan(x))
        return x;
    if (x > 0x1.62e42fefa39efp+9)
        return INFINITY;
    if (x < -0x1.74910d52d3052p+9)
        return 0.0;
    double n = floor(x * 0x1.71547652b82fep+0 + 0.5);
    double r = (x - n * 0x1.62e42feep-1) - n * 0x1.a39ef35793c76p-33;
    double p = exp_coef[0];
    for (int i = 1; i < 14; i++)
        p = p * r + exp_coef[i];
    return ldexp(p, (int)n);
}

double cltopk_expr_log(double x)
{
    if (isnan(x) || x < 0.0)
        return NAN;
    if (x == 0.0)
        return -INFINITY;
    if (isinf(x))
        return x;
    int e;
    double m = frexp(x, &e);
    if (m < 0x1.6a09e667f3bcdp-1) {
        m = m * 2.0;
        e = e - 1;
    }
    double s = (m - 1.0) / (m + 1.0), z = s * s;
    double p = 1.0 / 23.0;
    for (int i = 21; i >= 1; i -= 2)
        p = p * z + 1.0 / (double)i;
    double lm = 2.0 * s * p;
    double fe = (double)e;
    return (fe * 0x1.62e42feep-1 + lm) + fe * 0x1.a39ef35793c76p-33;
}
