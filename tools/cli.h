/* cli.h - what the subcommands of `cltopk` share: option parsing, messages,
 * number and value parsing, input and output of element arrays, JSON strings.
 * Built on the public API (cltopk.h) only. */
#ifndef CLTOPK_CLI_H
#define CLTOPK_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cltopk.h"

/* exit statuses of every subcommand */
#define EXIT_OK 0
#define EXIT_FAIL 1  /* the work failed: a library error, a bad file, results that disagree */
#define EXIT_USAGE 2 /* the command line is wrong */

/* ------------------------------------------------------------ subcommands */

int cmd_devices(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_topk(int argc, char **argv);
int cmd_select(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_demo(int argc, char **argv);
/* bit-packed columns (cmd_pack.c, cmd_unpackbench.c) */
int cmd_pack(int argc, char **argv);
int cmd_unpack(int argc, char **argv);
/* cmd_rows.c: many rows at once */
int cmd_knn(int argc, char **argv);
/* cmd_query.c: the top k rows of column files by an expression */
int cmd_query(int argc, char **argv);
/* cmd_index.c: the early-stopping top-k index (build, query, bench) */
int cmd_index(int argc, char **argv);
/* `cltopk bench --query`: the paper's three queries, fused against the peer */
int cmd_bench_query(int argc, char **argv);
/* `cltopk bench --rows R`, `--segments`, `--knn` */
int cmd_bench_rows(int argc, char **argv);
/* `cltopk topk --rows R [--ld L]` (R >= 1) or `--segments OFFS` on keys already read */
int topk_rows_file(const char *cmd, const char *path, cltopk_dtype type, const void *keys,
                   size_t n, uint64_t rows, uint64_t ld, const char *segfile, uint64_t k,
                   unsigned flags, cltopk_algo algo, const char *device, int json,
                   int explain);
int topk_packed_file(const char *path, uint64_t k, unsigned flags, cltopk_algo algo,
                     const char *device, int json, int explain);
int cmd_bench_unpack(int argc, char **argv);
/* `cltopk bench --cpu` (tools/cmd_bench_cpu.c), reached through cmd_bench */
int cmd_bench_cpu(int argc, char **argv);
/* `cltopk bench --stream` (tools/cmd_bench_stream.c), reached through cmd_bench */
int cmd_bench_stream(int argc, char **argv);

/* ---------------------------------------------------------------- options */

typedef struct {
    int id;            /* > 0, returned by cli_next */
    char short_name;   /* 0 if none */
    const char *long_name; /* NULL if none */
    int has_arg;
} cli_option;

typedef struct {
    const char *cmd; /* "topk", for messages */
    int argc;
    char **argv;
    int i;
    int no_more_options; /* after "--" */
} cli_parser;

void cli_init(cli_parser *p, const char *cmd, int argc, char **argv);
/* The next item of argv[1..]: an option id with *arg its value (or NULL), 0 for
 * an operand (in *arg), -1 at the end, or -2 after printing what is wrong
 * (unknown option, missing value, value given to a flag): the caller then exits
 * with EXIT_USAGE.  "-" is an operand; "--" ends the options.  A value follows
 * its option ("-k 5", "--k 5") or is attached ("-k5", "--k=5"). */
int cli_next(cli_parser *p, const cli_option *opts, const char **arg);

/* ---------------------------------------------------------------- messages */

/* "cltopk CMD: message" + "Try 'cltopk CMD --help'." on stderr; returns EXIT_USAGE */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "cltopk CMD: message" on stderr; returns EXIT_FAIL */
int fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "cltopk CMD: WHAT: strerror(st)" and the detail of cltopk_last_error(ctx) on
 * stderr; returns EXIT_FAIL */
int lib_fail(const char *cmd, const char *what, int st, const cltopk_context *ctx);
/* Open a context on `spec` (--device; NULL = auto) or print why not.  The spec
 * is made exact before cltopk_open sees it: auto, cpu and gpu in any case;
 * P:D only as two plain decimal numbers below 2^32 (no sign, blank or
 * wrap-around); part of a name only if it names one device (else the matches
 * are listed), which is then opened by its P:D.  auto means $CLTOPK_DEVICE
 * when set, checked the same way.  Returns 0, EXIT_USAGE (a bad or ambiguous
 * --device) or EXIT_FAIL. */
int open_device(const char *cmd, const char *spec, cltopk_context **ctx);
/* The exact spec open_device gives cltopk_open for `spec` (NULL = auto), into
 * buf: "auto" (the library's choice), "cpu", "gpu", "P:D", or a part of a name
 * that names no device (cltopk_open then says so).  0, or EXIT_USAGE (a bad
 * --device) / EXIT_FAIL (a bad $CLTOPK_DEVICE) with what is wrong in why. */
int device_spec(const char *spec, char *buf, size_t len, char *why, size_t whylen);

/* ----------------------------------------------------------------- numbers */

/* seconds of the monotonic clock */
double cli_seconds(void);
/* the median of v[0 .. n) (n > 0; sorts v) */
double cli_median(double *v, size_t n);

/* A count: decimal digits with an optional binary suffix K, M, G, T (also Ki,
 * Mi, ...; case-insensitive; 1K = 1024), or a power B^E such as 2^20.  Returns 0
 * or -1 (malformed, or above `max`). */
int parse_count(const char *s, uint64_t max, uint64_t *out);
/* Split s in place at commas into at most cap non-empty items; -1 if malformed. */
int split_list(char *s, const char **items, size_t cap, size_t *len);
/* A comma-separated list of counts, at most `cap` (and 64) of them. */
int parse_count_list(const char *s, uint64_t max, uint64_t *out, size_t cap, size_t *len);
/* A 64-bit unsigned number: decimal or 0x-hexadecimal. */
int parse_u64(const char *s, uint64_t *out);
int parse_type(const char *cmd, const char *s, cltopk_dtype *t);   /* prints; EXIT_USAGE */
int parse_algo(const char *cmd, const char *s, cltopk_algo *a);    /* prints; EXIT_USAGE */
int known_dist(const char *s);

/* ------------------------------------------------------------------ values */

/* Parse one element of type t from s (no surrounding blanks): integers in
 * decimal or 0x-hex, in range; floats as strtod reads them, plus nan, -nan,
 * nan(0xPAYLOAD), inf, -inf, infinity.  Returns 0 or -1 with *why set. */
int parse_value(cltopk_dtype t, const char *s, uint64_t *bits, const char **why);
/* Format one element so that parse_value reads back the same bits. */
void format_value(cltopk_dtype t, uint64_t bits, char *buf, size_t len);
/* The same as a JSON value: a number, or a string for NaN and infinities. */
void format_value_json(cltopk_dtype t, uint64_t bits, char *buf, size_t len);

/* ------------------------------------------------------------ input/output */

enum { FORMAT_AUTO = 0, FORMAT_BINARY = 1, FORMAT_TEXT = 2 };

/* The format of a file, never guessed from its contents: as asked (--text:
 * FORMAT_TEXT, --binary: FORMAT_BINARY), else FORMAT_TEXT for a name ending in
 * .txt or .csv (any case), else FORMAT_BINARY ("-" included). */
int file_format(const char *path, int asked);
/* Why file_format chose so, for reports: "--text", "--binary", "the .txt
 * name", "the .csv name", or "the default; --text reads text". */
const char *format_reason(const char *path, int asked);

/* Read a whole file ("-" = stdin) of elements of type t, in the format
 * file_format(path, *format) gives (set in *format).  Binary is raw
 * little-endian elements; text is one number per line (parse_value; blank
 * lines and lines starting with # are skipped; a line with a NUL byte or
 * anything after the number is an error).  On success *data (free it) holds
 * *n elements in host byte order.  On failure prints why (type_hint: what to
 * say of a binary size that is not a multiple of the element size, e.g. "give
 * the right -t, or --text for a text file") and returns EXIT_FAIL. */
int read_elements(const char *cmd, const char *path, cltopk_dtype t, const char *type_hint,
                  int *format, void **data, size_t *n);
/* path for messages: "<stdin>" for "-" */
const char *display_name(const char *path);
/* The whole of file `path` ("-": standard input) into *buf (malloc'd, the
 * caller frees) and *len; 0, or EXIT_FAIL with a message naming cmd. */
int read_whole_file(const char *cmd, const char *path, char **buf, size_t *len);
/* Convert between host order and little-endian, in place (no-op on LE hosts). */
void to_little_endian(void *a, size_t bytes, size_t n);

/* ----------------------------------------------------------- output files */

/* Every command that writes a file goes through these, so that no data is lost
 * when a write fails or the output names the input:
 *   "-"              standard output (binary data is refused on a terminal);
 *   an existing file that is not a regular file (a device such as /dev/null, a
 *                    FIFO): written directly; it is never removed;
 *   anything else    a new temporary file in the target's directory (mkstemp:
 *                    created exclusively, with the permissions of the file it
 *                    replaces, else 0666 less the umask), renamed over the
 *                    target by out_commit; on any failure only the temporary
 *                    is removed.  A symbolic link is followed: the file it
 *                    names is replaced and the link stays.
 * An output that is the input (the same device and inode) is refused unless
 * OUT_IN_PLACE is given: the command has then read its whole input before it
 * writes, and the rename replaces the input only once the output is complete. */
#define OUT_BINARY 1u   /* the data is binary: refused on a terminal */
#define OUT_CAN_TEXT 2u /* the command has --text (named when refusing a terminal) */
#define OUT_IN_PLACE 4u /* the output may be the input */

typedef struct {
    const char *cmd, *path; /* as given */
    FILE *f;                /* NULL until out_open succeeds */
    char *target;           /* the path renamed over (a link resolved), or NULL */
    char *tmp;              /* the temporary file, or NULL (direct or stdout) */
} out_file;

/* Refuse, before any work, an output that cannot or must not be written: a
 * directory, a dangling symbolic link, binary data for a terminal, the input
 * (input: its path, "-" for standard input, or NULL) without OUT_IN_PLACE.
 * Returns 0, or EXIT_USAGE / EXIT_FAIL after printing why. */
int out_check(const char *cmd, const char *path, unsigned flags, const char *input);
/* out_check, then open the output for writing (see above); 0 with o->f set, or
 * EXIT_USAGE / EXIT_FAIL after printing why (nothing is left behind). */
int out_open(out_file *o, const char *cmd, const char *path, unsigned flags, const char *input);
/* Write len bytes; 0 or EXIT_FAIL (printed, and the output abandoned as by
 * out_abort). */
int out_write(out_file *o, const void *buf, size_t len);
/* Flush, sync and close the output and put it in place; 0, or EXIT_FAIL after
 * printing why (the temporary is removed, the target left as it was). */
int out_commit(out_file *o);
/* Abandon the output: close it and remove the temporary (never the target). */
void out_abort(out_file *o);
/* path for messages: "<stdout>" for "-" */
const char *out_name(const char *path);

/* Print s as a JSON string (with the quotes). */
void json_string(FILE *f, const char *s);

/* A progress line of a long run on standard error, only when standard error is
 * a terminal: each call replaces the line ("\r" and the text, padded);
 * progress_done() clears it.  Nothing goes to a file or a pipe. */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void progress_done(void);

#endif
