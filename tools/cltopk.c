/* cltopk.c - the `cltopk` command: devices, gen, topk, select, bench, tune, demo.
 * Built on the public API only; the subcommands live in cmd_*.c. */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"devices", cmd_devices, "list the OpenCL devices, the 'cpu' device and which 'auto' picks"},
    {"gen", cmd_gen, "write test data (raw little-endian binary or text)"},
    {"topk", cmd_topk, "print the k largest (or smallest) elements of a file, with positions"},
    {"knn", cmd_knn, "the k nearest points of each query (exact; squared L2 or inner product)"},
    {"query", cmd_query, "the top k rows of column files by an expression, with a filter"},
    {"index", cmd_index, "the early-stopping top-k index of scored tuples: build, query, bench"},
    {"select", cmd_select, "print the element at one rank of the order (the k-th element)"},
    {"bench", cmd_bench, "time algorithms against the device's read floor"},
    {"tune", cmd_tune, "find the fastest bitonic kernel configuration for each k"},
    {"demo", cmd_demo, "check that every device and algorithm agrees bit for bit"},
    {"pack", cmd_pack, "pack an int32 column (GPU-FOR, GPU-DFOR or GPU-RFOR)"},
    {"unpack", cmd_unpack, "decode a packed column (on the device or the CPU)"},
    {NULL, NULL, NULL},
};

static void print_help(void)
{
    printf("cltopk %s - exact top-k and k-th element selection on OpenCL devices and the CPU\n"
           "\n"
           "Usage: cltopk COMMAND [OPTIONS] [ARGS]\n"
           "       cltopk help COMMAND    (the same as: cltopk COMMAND --help)\n"
           "       cltopk --version\n"
           "\n"
           "Commands:\n",
           cltopk_version_string());
    for (const command *c = commands; c->name; c++)
        printf("  %-9s %s\n", c->name, c->summary);
    printf("\n"
           "Try it:\n"
           "  cltopk devices                         what can run here\n"
           "  cltopk gen -t f32 -n 1M data.f32       a million random floats\n"
           "  cltopk topk -k 10 data.f32             the 10 largest, with their positions\n"
           "  cltopk topk -k 10 --smallest data.f32  the 10 smallest\n"
           "  cltopk bench                           how fast, next to the memory read floor\n"
           "  cltopk demo                            every device agrees bit for bit?\n"
           "\n"
           "Devices (--device SPEC): auto (default: $CLTOPK_DEVICE, else the first GPU, else\n"
           "any OpenCL device, else cpu), cpu, gpu, P:D as 'cltopk devices' lists them, or\n"
           "part of one device's name.\n"
           "Exit status: 0 success, 1 failure, 2 bad command line.\n"
           "The manual page cltopk(1) lists the environment variables.\n");
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        print_help();
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        print_help();
        return EXIT_OK;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
        printf("cltopk %s (library %s)\n", CLTOPK_VERSION_STRING, cltopk_version_string());
        return EXIT_OK;
    }
    if (!strcmp(name, "help")) {
        if (argc < 3) {
            print_help();
            return EXIT_OK;
        }
        if (argc > 3)
            return usage_error(NULL, "'help' takes one command name");
        for (const command *c = commands; c->name; c++)
            if (!strcmp(argv[2], c->name)) {
                static char help_opt[] = "--help";
                char *args[] = {argv[2], help_opt, NULL};
                return c->run(2, args);
            }
        return usage_error(NULL, "unknown command '%s'", argv[2]);
    }
    for (const command *c = commands; c->name; c++)
        if (!strcmp(name, c->name))
            return c->run(argc - 1, argv + 1);
    if (name[0] == '-')
        return usage_error(NULL, "unknown option '%s' (options come after the command)", name);
    return usage_error(NULL, "unknown command '%s'", name);
}

int main(int argc, char **argv)
{
#ifdef SIGXFSZ
    /* a write past the file size limit (ulimit -f) then fails with EFBIG, and
     * the command removes its temporary file and says so, instead of dying */
    if (signal(SIGXFSZ, SIG_IGN) == SIG_ERR)
        return fail(NULL, "cannot ignore SIGXFSZ: %s", strerror(errno));
#endif
    int rc = dispatch(argc, argv);
    /* output that could not be written (a full disk, a closed pipe) is a failure */
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == EXIT_OK)
        rc = fail(NULL, "cannot write the output: %s", strerror(errno));
    return rc;
}
