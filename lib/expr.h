/* expr.h - the expressions of cltopk_query_topk: parsed into a tree, checked
 * against the columns, and compiled to a small stack program that the CPU
 * (cpu/querycpu.c) and the device (cl/query.cl) interpret with the same
 * operations, so that every device gives the same bits.  The caller's text is
 * never passed to an OpenCL compiler: only the program (numbers) reaches the
 * device.
 *
 * A program is a sequence of 32-bit words, each an operation (low 8 bits) and
 * an operand (the high 24 bits: a column, a constant, a comparison); the
 * constants are 64-bit words.  The stack holds 64-bit slots: a number (the
 * bits of a float32 or float64, as the score type says), a truth value (0 or
 * 1), or an exact integer (its 64 bits and a flag saying it is negative, so
 * that int64 and uint64 values compare exactly). */
#ifndef CLTOPK_EXPR_H
#define CLTOPK_EXPR_H

#include <stddef.h>
#include <stdint.h>

#define EXPR_MAX_TEXT 4096  /* bytes of one expression */
#define EXPR_MAX_DEPTH 64   /* nesting of the tree */
#define EXPR_MAX_OPS 512    /* operations of one program */
#define EXPR_MAX_STACK 32   /* stack slots of one program */
#define EXPR_MAX_COLS 64    /* columns of one call */
#define EXPR_MAX_REFS 8     /* distinct columns one call may use */

/* operations (shared with cl/query.cl: keep in step) */
enum {
    XOP_COLF = 1, /* push column a's value as a number (converted, rounded to nearest) */
    XOP_COLI,     /* push column a's value as an exact integer */
    XOP_CONF,     /* push constant a (a number's bits) */
    XOP_CONI,     /* push constant a (an integer's bits) with constant a + 1 (its sign flag) */
    XOP_ADD, XOP_SUB, XOP_MUL, XOP_DIV, XOP_NEG,
    XOP_MIN, XOP_MAX, XOP_ABS, XOP_SQRT, XOP_LOG, XOP_EXP, XOP_FLOOR, XOP_CEIL,
    XOP_CMPF,     /* numbers compared by a (XCMP_*) */
    XOP_CMPI,     /* exact integers compared by a */
    XOP_AND, XOP_OR, XOP_NOT,
    XOP_SEL,      /* c, x, y -> c ? x : y */
    XOP_FMA       /* acc, y, z -> fma(y, z, acc), rounded once: no expression makes it (the
                     early-stopping index's score, lib/indexdev.c); only cl/query.cl runs
                     it, not cpu/querycpu.c (the index's jobs run on the device only) */
};
enum { XCMP_LT, XCMP_LE, XCMP_GT, XCMP_GE, XCMP_EQ, XCMP_NE };

#define XOP_WORD(op, a) ((uint32_t)(op) | ((uint32_t)(a) << 8))

typedef struct {
    uint32_t ops[EXPR_MAX_OPS];
    int nops;
    uint64_t consts[2 * EXPR_MAX_OPS];
    int nconsts;
    int depth; /* the stack slots it needs */
} expr_prog;

/* a column as the compiler sees it */
typedef struct {
    const char *name;
    int type; /* cltopk_dtype */
} expr_col;

/* what one call compiles to: the score program, the filter program (nwhere
 * 0: none), and the columns they use (refs: indices into the caller's
 * columns; the programs' column operands index refs) */
typedef struct {
    expr_prog order, where;
    int has_where;
    int refs[EXPR_MAX_REFS];
    int nrefs;
    int score64; /* 1: float64 scores */
} expr_query;

/* Compile order_by (a number) and where (NULL, or a condition) against the
 * columns.  0 on success; else -1 with a message in err naming the
 * expression, the byte position (from 1) and what was expected. */
int cltopk_expr_compile(const expr_col *cols, int ncols, const char *order_by,
                        const char *where, int score64, expr_query *q, char *err,
                        size_t errlen);

/* cltopk's own log and exp (the same operations on every device) */
float cltopk_expr_logf(float x);
float cltopk_expr_expf(float x);
double cltopk_expr_log(double x);
double cltopk_expr_exp(double x);

#endif
