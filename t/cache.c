/* cache.c - the on-disk kernel binary cache (CLTOPK_CACHE_DIR, CLTOPK_CACHE=0).
 *
 * In fresh directories under the test temp dir:
 *   - a first context writes *.bin files (and leaves no temporary file);
 *   - a second context reads them: results exact, the files not rewritten
 *     (same inode and contents: a rebuild would replace them);
 *   - another key type adds files of its own;
 *   - damaged files (truncated, garbage, wrong magic, empty, a flipped byte in
 *     the key text or in the binary, bytes after the end) are misses: results
 *     exact, the file replaced by a good one;
 *   - CLTOPK_CACHE=0 writes nothing; an unusable directory is no error;
 *   - the directories it makes and the files it writes are the user's alone
 *     (0700, 0600); a directory that others may write to is not used at all;
 *   - in the directory, a link planted at a temporary file's name or in place
 *     of an entry is never followed, and a FIFO in place of an entry neither
 *     blocks the call nor stays (each a miss, the entry written anew);
 *   - the same for the planner's constants (plan-*.txt), in fresh processes
 *     (this program run as a child with --explain-child: cltopk_explain). */
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static rng_t rng;
static char dev[256];

#define PATHLEN 4096

/* snprintf into a PATHLEN buffer; a path that does not fit ends the test */
static void TAP_PRINTF(2, 3) mkpath(char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, PATHLEN, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= PATHLEN)
        bail("path too long");
}

#define MAXF 64

typedef struct {
    int n;
    char name[MAXF][256];
    ino_t ino[MAXF];
    off_t size[MAXF];
} listing;

static void list_dir(const char *dir, listing *l, int *tmpfiles)
{
    memset(l, 0, sizeof *l);
    *tmpfiles = 0;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len > 4 && !strcmp(de->d_name + len - 4, ".tmp"))
            (*tmpfiles)++;
        if (len <= 4 || strcmp(de->d_name + len - 4, ".bin") || l->n >= MAXF)
            continue;
        char path[PATHLEN];
        struct stat st;
        mkpath(path, "%s/%s", dir, de->d_name);
        if (stat(path, &st) != 0)
            continue;
        snprintf(l->name[l->n], sizeof l->name[0], "%s", de->d_name);
        l->ino[l->n] = st.st_ino;
        l->size[l->n] = st.st_size;
        l->n++;
    }
    closedir(d);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* a bitonic top-k on a fresh context, checked against the oracle */
static int run_bitonic(cltopk_dtype t, const char *what)
{
    cltopk_context *ctx = NULL;
    int st = cltopk_open(&ctx, dev);
    if (st != CLTOPK_OK) {
        ok(0, "%s: open %s", what, dev);
        diag("%s", cltopk_last_error(NULL));
        return 0;
    }
    size_t n = 20011;
    void *keys = bmalloc(n * tsize(t));
    int good = 1;
    char msg[1024];
    for (int s = 0; s < 2 && good; s++) {
        gen_data(t, "special", n, s, &rng, keys);
        int64_t *perm = oracle_order(t, keys, n, s);
        size_t ks[] = {1, 100, 1000};
        for (int i = 0; i < 3 && good; i++)
            if (!check_topk(ctx, CLTOPK_ALGO_BITONIC, t, keys, n, ks[i], s, perm, WANT_BOTH,
                            CLTOPK_OK, msg, sizeof msg)) {
                good = 0;
                diag_after("k = %zu: %s", ks[i], msg);
            }
        free(perm);
    }
    free(keys);
    cltopk_close(ctx);
    ok(good, "%s: bitonic %s results exact", what, tname(t));
    return good;
}

static int same_files(const listing *a, const listing *b)
{
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++) {
        int found = 0;
        for (int j = 0; j < b->n; j++)
            if (!strcmp(a->name[i], b->name[j]) && a->ino[i] == b->ino[j] &&
                a->size[i] == b->size[j])
                found = 1;
        if (!found)
            return 0;
    }
    return 1;
}

static int file_starts_with(const char *path, const char *magic)
{
    char buf[32] = "";
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t len = strlen(magic);
    size_t got = fread(buf, 1, len, f);
    fclose(f);
    return got == len && !memcmp(buf, magic, len);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
        sysbail("writing %s", path);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        sysbail("opening %s", path);
    fseek(f, 0, SEEK_END);
    long l = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = bmalloc((size_t)l + 1);
    if (fread(buf, 1, (size_t)l, f) != (size_t)l)
        sysbail("reading %s", path);
    fclose(f);
    *len = (size_t)l;
    return buf;
}

/* damage every cache file in dir the same way */
static void damage(const char *dir, const listing *l, int how)
{
    for (int i = 0; i < l->n; i++) {
        char path[PATHLEN];
        mkpath(path, "%s/%s", dir, l->name[i]);
        size_t len;
        char *buf = read_file(path, &len);
        switch (how) {
        case 0: /* truncated in the middle of the binary */
            write_file(path, buf, len / 2);
            break;
        case 1: /* garbage of the same size */
            for (size_t j = 0; j < len; j++)
                buf[j] = (char)rng_next(&rng);
            write_file(path, buf, len);
            break;
        case 2: /* wrong magic */
            buf[0] ^= 0x20;
            write_file(path, buf, len);
            break;
        case 3: /* empty */
            write_file(path, buf, 0);
            break;
        case 4: /* one byte of the key text (after magic and length) flipped */
            if (len > 20)
                buf[18] ^= 0x01;
            write_file(path, buf, len);
            break;
        case 5: /* one byte of the binary flipped (before the trailing checksum) */
            if (len > 64)
                buf[len - 9 - (len - 64) / 2] ^= 0x10;
            write_file(path, buf, len);
            break;
        case 6: { /* a good entry with bytes after its end (it is read no further) */
            char *longer = bmalloc(len + 4096);
            memcpy(longer, buf, len);
            memset(longer + len, 'x', 4096);
            write_file(path, longer, len + 4096);
            free(longer);
            break;
        }
        }
        free(buf);
    }
}

static const char *const damage_name[] = {"truncated", "garbage", "wrong magic", "empty",
                                          "key text changed", "binary changed",
                                          "bytes after the end"};

/* ------------------------------------------- links, FIFOs and permissions */

static mode_t perm_of(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

static int is_regular(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* 1 if the file at path holds exactly data (len bytes) */
static int holds(const char *path, const void *data, size_t len)
{
    size_t got;
    char *buf = read_file(path, &got);
    int same = got == len && !memcmp(buf, data, len);
    free(buf);
    return same;
}

/* every entry of l (in dir) a regular *.bin file of the user's alone, with its magic */
static int entries_good(const char *dir, const listing *l)
{
    int good = l->n > 0;
    for (int i = 0; i < l->n; i++) {
        char path[PATHLEN];
        mkpath(path, "%s/%s", dir, l->name[i]);
        good &= is_regular(path) && (perm_of(path) & 077) == 0 &&
                file_starts_with(path, "CLTOPKBIN2\n");
    }
    return good;
}

/* While the call runs, look at the FIFOs: a writer's non-blocking open succeeds
 * only while a reader has one open, i.e. when the call blocks on it (the open
 * also lets such a reader go on, to a miss, so the test ends either way). */
typedef struct {
    char path[MAXF][PATHLEN];
    int n;
    atomic_int done;
    atomic_int blocked;
} fifo_watch;

static int fifo_has_reader(const char *path)
{
    int fd = open(path, O_WRONLY | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    int fifo = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
    close(fd);
    return fifo;
}

static void *watch_fifos(void *arg)
{
    fifo_watch *w = arg;
    for (int t = 0; !atomic_load(&w->done); t++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (t < 30) /* 3 s: a non-blocking open that checks and closes is long over */
            continue;
        for (int i = 0; i < w->n; i++)
            if (fifo_has_reader(w->path[i]))
                atomic_store(&w->blocked, 1);
    }
    return NULL;
}

static void kernel_cache_links(const char *base)
{
    char dir[PATHLEN], victim[PATHLEN], path[PATHLEN], tmpname[PATHLEN];
    listing l, after;
    int tmp;
    mkpath(dir, "%s/links", base);
    if (mkdir(dir, 0700) != 0)
        sysbail("mkdir %s", dir);
    setenv("CLTOPK_CACHE_DIR", dir, 1);
    mkpath(victim, "%s/victim", base);
    static const char precious[] = "precious\n";
    write_file(victim, precious, sizeof precious - 1);
    run_bitonic(CLTOPK_INT32, "links: first context");
    list_dir(dir, &l, &tmp);
    if (!ok(l.n > 0, "links: the first context wrote %d entries", l.n))
        return;

    /* a link at the temporary name a writer of this process would have used */
    for (int i = 0; i < l.n; i++) {
        mkpath(path, "%s/%s", dir, l.name[i]);
        mkpath(tmpname, "%s.%ld.tmp", path, (long)getpid());
        if (unlink(path) != 0 || symlink(victim, tmpname) != 0)
            sysbail("planting a link at %s", tmpname);
    }
    run_bitonic(CLTOPK_INT32, "links at the temporary names");
    ok(holds(victim, precious, sizeof precious - 1),
       "a link planted at a temporary file's name was not followed (its target is intact)");
    list_dir(dir, &after, &tmp);
    ok(after.n == l.n && entries_good(dir, &after),
       "the entries were written anew, as regular files (%d of %d)", after.n, l.n);
    for (int i = 0; i < l.n; i++) {
        mkpath(tmpname, "%s/%s.%ld.tmp", dir, l.name[i], (long)getpid());
        if (unlink(tmpname) != 0 && errno != ENOENT) /* a writer that followed it moved it */
            sysbail("removing %s", tmpname);
    }

    /* links in place of the entries, to good copies elsewhere */
    for (int i = 0; i < l.n; i++) {
        char copy[PATHLEN];
        size_t len;
        mkpath(path, "%s/%s", dir, l.name[i]);
        mkpath(copy, "%s/copy-%d", base, i);
        char *buf = read_file(path, &len);
        write_file(copy, buf, len);
        free(buf);
        if (unlink(path) != 0 || symlink(copy, path) != 0)
            sysbail("planting a link at %s", path);
    }
    run_bitonic(CLTOPK_INT32, "links in place of the entries");
    list_dir(dir, &after, &tmp);
    ok(after.n == l.n && entries_good(dir, &after),
       "a link in place of an entry is a miss, replaced by a regular file");

    /* FIFOs in place of the entries */
    static fifo_watch w;
    memset(&w, 0, sizeof w);
    for (int i = 0; i < l.n; i++) {
        mkpath(w.path[i], "%s/%s", dir, l.name[i]);
        if (unlink(w.path[i]) != 0 || mkfifo(w.path[i], 0600) != 0)
            sysbail("making a FIFO at %s", w.path[i]);
    }
    w.n = l.n;
    pthread_t th;
    if (pthread_create(&th, NULL, watch_fifos, &w) != 0)
        bail("pthread_create failed");
    run_bitonic(CLTOPK_INT32, "FIFOs in place of the entries");
    atomic_store(&w.done, 1);
    pthread_join(th, NULL);
    ok(!atomic_load(&w.blocked), "a FIFO in place of an entry does not block the call");
    list_dir(dir, &after, &tmp);
    ok(after.n == l.n && entries_good(dir, &after),
       "the FIFOs were replaced by regular entries (%d of %d)", after.n, l.n);
}

/* the cache directory must be the user's and not writable by others */
static void kernel_cache_dir_modes(const char *base)
{
    static const mode_t bad[] = {0777, 0770, 0703};
    char dir[PATHLEN];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mkpath(dir, "%s/mode%03o", base, (unsigned)bad[i]);
        if (mkdir(dir, 0700) != 0 || chmod(dir, bad[i]) != 0)
            sysbail("making %s", dir);
        setenv("CLTOPK_CACHE_DIR", dir, 1);
        char what[64];
        snprintf(what, sizeof what, "a directory of mode %03o", (unsigned)bad[i]);
        run_bitonic(CLTOPK_INT32, what);
        ok(count_entries(dir) == 0, "%s is not used (%d entries)", what, count_entries(dir));
    }
    mkpath(dir, "%s/mode755", base);
    if (mkdir(dir, 0700) != 0 || chmod(dir, 0755) != 0)
        sysbail("making %s", dir);
    setenv("CLTOPK_CACHE_DIR", dir, 1);
    run_bitonic(CLTOPK_INT32, "a directory of mode 755");
    ok(count_entries(dir) > 0, "a directory of mode 755 is used (%d entries)",
       count_entries(dir));
    if (geteuid() != 0) {
        skip("a directory of another user: needs root to make one");
        return;
    }
    mkpath(dir, "%s/nobody", base);
    if (mkdir(dir, 0700) != 0 || chown(dir, 65534, 65534) != 0)
        sysbail("making %s", dir);
    setenv("CLTOPK_CACHE_DIR", dir, 1);
    run_bitonic(CLTOPK_INT32, "a directory of another user");
    ok(count_entries(dir) == 0, "a directory of another user is not used (%d entries)",
       count_entries(dir));
}

/* ----------------------------------------- the planner's constants (child) */

/* --explain-child DEV: plan one call on DEV (reads the constants, measures and
 * saves them when missing); exit 0 when that worked */
static int explain_child(const char *device)
{
    cltopk_context *ctx;
    if (cltopk_open(&ctx, device) != CLTOPK_OK) {
        /* the parent's diag shows the status; the detail goes to the log */
        fprintf(stderr, "# explain child: cltopk_open(\"%s\"): %s\n", device,
                cltopk_last_error(NULL));
        return 2;
    }
    char buf[8192];
    int st = cltopk_explain(ctx, CLTOPK_INT32, (size_t)1 << 20, 100, CLTOPK_LARGEST, 0, buf,
                            sizeof buf);
    if (st != CLTOPK_OK)
        fprintf(stderr, "# explain child: cltopk_explain: %s\n", cltopk_last_error(ctx));
    cltopk_close(ctx);
    return st == CLTOPK_OK ? 0 : 1;
}

#define FULL_CONSTS "bw=1e10,launch=1e-5,lrate=1e10,h2d=1e9,cpubw=1e10"

/* Run this program as a child that plans a call; consts: CLTOPK_PLAN_CONSTS or
 * NULL; plant: an entry whose temporary name of the child gets a link to
 * victim; fifo: a FIFO to watch.  0: the child succeeded; -1: it blocked on
 * the FIFO (and was killed); else its exit status or 128 + its signal. */
static int run_child(const char *consts, const char *plant, const char *victim,
                     const char *fifo)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        sysbail("fork");
    if (pid == 0) {
        if (plant) {
            char tmpname[PATHLEN + 64];
            snprintf(tmpname, sizeof tmpname, "%s.%ld.tmp", plant, (long)getpid());
            if (symlink(victim, tmpname) != 0)
                _exit(120);
        }
        if (consts)
            setenv("CLTOPK_PLAN_CONSTS", consts, 1);
        else
            unsetenv("CLTOPK_PLAN_CONSTS");
        execl("/proc/self/exe", "cache.t", "--explain-child", dev, (char *)NULL);
        _exit(127);
    }
    int ws;
    for (int t = 0;; t++) {
        pid_t r = waitpid(pid, &ws, WNOHANG);
        if (r == pid)
            break;
        if (r < 0)
            sysbail("waitpid");
        int blocked = fifo && t >= 30 && fifo_has_reader(fifo);
        if (blocked || t >= 3000) { /* blocked, or 300 s */
            kill(pid, SIGKILL);
            if (waitpid(pid, &ws, 0) != pid)
                sysbail("waitpid");
            return blocked ? -1 : 124;
        }
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* the name of the one plan-*.txt in dir, or 0 */
static int find_plan(const char *dir, char *path)
{
    DIR *d = opendir(dir);
    int found = 0;
    if (!d)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (!strncmp(de->d_name, "plan-", 5) && strlen(de->d_name) > 9 &&
            !strcmp(de->d_name + strlen(de->d_name) - 4, ".txt")) {
            mkpath(path, "%s/%s", dir, de->d_name);
            found++;
        }
    closedir(d);
    return found == 1;
}

static void plan_consts_files(const char *base)
{
    char dir[PATHLEN], plan[PATHLEN], victim[PATHLEN], copy[PATHLEN];
    mkpath(dir, "%s/plan", base);
    if (mkdir(dir, 0700) != 0)
        sysbail("mkdir %s", dir);
    setenv("CLTOPK_CACHE_DIR", dir, 1);
    mkpath(victim, "%s/plan-victim", base);
    static const char precious[] = "precious\n";
    write_file(victim, precious, sizeof precious - 1);

    int r = run_child(NULL, NULL, NULL, NULL);
    if (r == 2) {
        /* the child could not open the device at all (its log line says why;
         * seen on the NVIDIA machine, where a child exec'd by a process that
         * holds the GPU found no NVIDIA platform): nothing here is about the
         * cache file */
        skip("the planner's constants file: a child process cannot open %s here", dev);
        return;
    }
    if (!ok(r == 0 && find_plan(dir, plan), "a fresh process saved the planner's constants "
                                             "(child status %d)", r))
        return;
    ok(is_regular(plan) && (perm_of(plan) & 077) == 0,
       "plan-*.txt is a regular file of the user's alone (mode %o)", (unsigned)perm_of(plan));

    /* a link at the child's temporary name */
    size_t len;
    char *good = read_file(plan, &len);
    if (unlink(plan) != 0)
        sysbail("removing %s", plan);
    r = run_child(NULL, plan, victim, NULL);
    ok(r == 0 && holds(victim, precious, sizeof precious - 1) && is_regular(plan),
       "plan-*.txt: a link at the temporary name was not followed (child status %d)", r);
    char tmpname[PATHLEN];
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (strstr(de->d_name, ".tmp")) {
            mkpath(tmpname, "%s/%s", dir, de->d_name);
            if (unlink(tmpname) != 0)
                sysbail("removing %s", tmpname);
        }
    if (d)
        closedir(d);

    /* a FIFO in place of the file (the constants from the environment: nothing
     * measured, nothing saved, but the file is read first) */
    if (unlink(plan) != 0 || mkfifo(plan, 0600) != 0)
        sysbail("making a FIFO at %s", plan);
    r = run_child(FULL_CONSTS, NULL, NULL, plan);
    ok(r == 0, "plan-*.txt: a FIFO in its place does not block the planner (child status %d%s)",
       r, r == -1 ? ": blocked" : "");

    /* a link in place of the file, to good constants elsewhere: not read, so
     * measured and saved as a regular file */
    mkpath(copy, "%s/plan-copy", base);
    write_file(copy, good, len);
    free(good);
    if (unlink(plan) != 0 || symlink(copy, plan) != 0)
        sysbail("planting a link at %s", plan);
    r = run_child(NULL, NULL, NULL, NULL);
    ok(r == 0 && is_regular(plan),
       "plan-*.txt: a link in its place is not read, the file is written anew (child "
       "status %d)", r);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--explain-child"))
        return explain_child(argv[2]);
    plan_lazy();
    watchdog(900);
    rng_init(&rng, test_seed() ^ 0xCAC4E);
    if (!test_cl_device(dev, sizeof dev))
        skip_all("%s", dev);

    char base[PATHLEN];
    mkpath(base, "%s/cache-test-XXXXXX", test_tmpdir());
    if (!mkdtemp(base))
        sysbail("mkdtemp(%s)", base);
    diag("temporary directory %s", base);
    unsetenv("CLTOPK_CACHE");

    /* 1. first run writes, second run reads */
    char dir[PATHLEN];
    mkpath(dir, "%s/a/b", base); /* does not exist yet */
    setenv("CLTOPK_CACHE_DIR", dir, 1);
    listing l1, l2, l3;
    int tmp;
    run_bitonic(CLTOPK_FLOAT32, "first context");
    list_dir(dir, &l1, &tmp);
    ok(l1.n >= 1, "the first context wrote %d *.bin file(s) into a new directory", l1.n);
    ok(tmp == 0, "no temporary files left (%d)", tmp);
    {
        char made[PATHLEN];
        mkpath(made, "%s/a", base);
        ok(perm_of(made) == 0700 && perm_of(dir) == 0700,
           "the directories made for the cache have mode 0700 (%o, %o)",
           (unsigned)perm_of(made), (unsigned)perm_of(dir));
        ok(entries_good(dir, &l1), "the cache files are regular files of the user's alone");
    }
    {
        int good = l1.n > 0;
        for (int i = 0; i < l1.n; i++) {
            char path[PATHLEN];
            mkpath(path, "%s/%s", dir, l1.name[i]);
            good &= file_starts_with(path, "CLTOPKBIN2\n");
        }
        ok(good, "every cache file starts with its magic");
    }
    run_bitonic(CLTOPK_FLOAT32, "second context");
    list_dir(dir, &l2, &tmp);
    ok(same_files(&l1, &l2), "the second context used the cache: no file added or rewritten");
    run_bitonic(CLTOPK_UINT64, "another type");
    list_dir(dir, &l3, &tmp);
    ok(l3.n > l1.n, "another key type adds its own files (%d -> %d)", l1.n, l3.n);

    /* 2. damaged files are misses, replaced by good ones */
    for (int how = 0; how < 7; how++) {
        listing before, damaged, after;
        list_dir(dir, &before, &tmp);
        damage(dir, &before, how);
        list_dir(dir, &damaged, &tmp);
        char what[64];
        snprintf(what, sizeof what, "cache %s", damage_name[how]);
        run_bitonic(CLTOPK_FLOAT32, what);
        run_bitonic(CLTOPK_UINT64, what);
        list_dir(dir, &after, &tmp);
        int good = after.n == before.n;
        for (int i = 0; i < after.n; i++) {
            char path[PATHLEN];
            mkpath(path, "%s/%s", dir, after.name[i]);
            good &= file_starts_with(path, "CLTOPKBIN2\n") && after.size[i] > 64;
            /* a new file took the damaged one's place (written, then renamed) */
            for (int j = 0; j < damaged.n; j++)
                if (!strcmp(damaged.name[j], after.name[i]) && damaged.ino[j] == after.ino[i])
                    good = 0;
        }
        ok(good, "%s: the damaged files were replaced by good ones", what);
    }

    /* 3. CLTOPK_CACHE=0 writes nothing */
    mkpath(dir, "%s/off", base);
    if (mkdir(dir, 0755) != 0)
        sysbail("mkdir %s", dir);
    setenv("CLTOPK_CACHE_DIR", dir, 1);
    setenv("CLTOPK_CACHE", "0", 1);
    run_bitonic(CLTOPK_INT32, "CLTOPK_CACHE=0");
    ok(count_entries(dir) == 0, "CLTOPK_CACHE=0 wrote nothing (%d entries)", count_entries(dir));
    unsetenv("CLTOPK_CACHE");

    /* 4. a directory that cannot be made: no error, just no cache */
    char file[PATHLEN];
    mkpath(file, "%s/plainfile", base);
    write_file(file, "x", 1);
    mkpath(dir, "%s/sub", file);
    setenv("CLTOPK_CACHE_DIR", dir, 1);
    run_bitonic(CLTOPK_INT32, "unusable cache directory");

    /* 5. permissions, links and FIFOs */
    kernel_cache_dir_modes(base);
    kernel_cache_links(base);
    plan_consts_files(base);

    /* clean up our directory tree */
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0)
        diag("could not remove %s", base);
    return tap_done();
}
