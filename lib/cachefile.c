/* cachefile.c - the files of the disk cache, safe in a directory others can reach.
 *
 * The cache directory (CLTOPK_CACHE_DIR, or the user's cache directory) may be
 * shared or planted by someone else, so every file operation distrusts it:
 *   - the directory is used only when it is a directory of the effective user
 *     that neither group nor others may write to; it is opened once per
 *     operation and checked through that descriptor, and the entry is then
 *     named relative to it (no race between the check and the use);
 *   - directories the library makes get mode 0700;
 *   - an entry is opened for reading without following a link and without
 *     blocking (O_NOFOLLOW | O_NONBLOCK) and used only when it is a regular file
 *     of the effective user that neither group nor others may write to, so a
 *     link, FIFO or device in its place is a miss; the caller bounds what it
 *     reads by the size the entry's header declares;
 *   - an entry is written to a new temporary file (O_CREAT | O_EXCL |
 *     O_NOFOLLOW, mode 0600, an unpredictable name) that is then renamed over
 *     the entry, so nothing planted at a temporary name is followed and the
 *     rename replaces whatever was in the entry's place, never its target.
 * Every problem is a miss (or a skipped write), never an error of the call. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

/* 1 if st (of a directory or an entry) is the effective user's and neither
 * group nor others may write to it */
static int private_to_user(const struct stat *st)
{
    return st->st_uid == geteuid() && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

int cltopk_cachedir_usable(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return errno == ENOENT; /* made (0700) when the first entry is written */
    return S_ISDIR(st.st_mode) && private_to_user(&st);
}

/* the directory part of path into dir and the entry's name; 0 or -1 */
static int split_path(const char *path, char *dir, size_t dlen, const char **name)
{
    const char *slash = strrchr(path, '/');
    if (!slash || !slash[1])
        return -1;
    size_t l = slash == path ? 1 : (size_t)(slash - path);
    if (l >= dlen)
        return -1;
    memcpy(dir, path, l);
    dir[l] = 0;
    *name = slash + 1;
    return 0;
}

/* a descriptor of the directory of path, checked; -1 when it may not be used */
static int open_dir(const char *path, const char **name)
{
    char dir[4096];
    if (split_path(path, dir, sizeof dir, name) != 0)
        return -1;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    struct stat st;
    if (fstat(dfd, &st) != 0 || !S_ISDIR(st.st_mode) || !private_to_user(&st)) {
        close(dfd);
        return -1;
    }
    return dfd;
}

int cltopk_cachefile_open(const char *path, uint64_t *size)
{
    const char *name;
    int dfd = open_dir(path, &name);
    if (dfd < 0)
        return -1;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    close(dfd);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !private_to_user(&st) ||
        st.st_size < 0) {
        close(fd);
        return -1;
    }
    *size = (uint64_t)st.st_size;
    return fd;
}

int cltopk_cachefile_read(int fd, void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) /* an error, or the file ended early */
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

char *cltopk_cachefile_slurp(const char *path, size_t cap, size_t *len)
{
    uint64_t size;
    int fd = cltopk_cachefile_open(path, &size);
    if (fd < 0)
        return NULL;
    char *buf = NULL;
    if (size <= cap && (buf = malloc((size_t)size + 1)) != NULL) {
        if (cltopk_cachefile_read(fd, buf, (size_t)size) == 0) {
            buf[size] = 0;
            *len = (size_t)size;
        } else {
            free(buf);
            buf = NULL;
        }
    }
    close(fd);
    return buf;
}

/* an unpredictable 64-bit number for a temporary name (its safety comes from
 * O_EXCL | O_NOFOLLOW; this only makes a planted name unlikely to be hit) */
static uint64_t tmp_token(void)
{
    static atomic_uint_fast64_t counter;
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        ts.tv_sec = ts.tv_nsec = 0;
    uint64_t x = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_sec * 1000000007u ^
                 (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&ts ^
                 (atomic_fetch_add(&counter, 1) + 1) * 0x9e3779b97f4a7c15ull;
    /* splitmix64's finaliser */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int write_all(int fd, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int cltopk_cachefile_write(const char *path, int nparts, const void *const *parts,
                           const size_t *lens)
{
    const char *name;
    int dfd = open_dir(path, &name);
    if (dfd < 0)
        return -1;
    char tmp[512];
    int fd = -1;
    for (int tries = 0; tries < 16 && fd < 0; tries++) {
        int n = snprintf(tmp, sizeof tmp, "%.200s.%016llx.tmp", name,
                         (unsigned long long)tmp_token());
        if (n < 0 || (size_t)n >= sizeof tmp)
            break;
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                    0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        close(dfd);
        return -1;
    }
    int ok = 1;
    for (int i = 0; i < nparts && ok; i++)
        ok = write_all(fd, parts[i], lens[i]) == 0;
    ok = close(fd) == 0 && ok;
    if (ok)
        ok = renameat(dfd, tmp, dfd, name) == 0;
    if (!ok && unlinkat(dfd, tmp, 0) != 0) {
        /* nothing more to do: a stray temporary file is harmless */
    }
    close(dfd);
    return ok ? 0 : -1;
}
