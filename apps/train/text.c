/* text.c: reads the fortune files, cuts them into fortunes, keeps every tenth for validation, maps bytes to character ids, and broadcasts the texts. */
#include "text.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The whole package holds 2.6 MB of text: a bound against a wrong --data. */
#define TEXT_MAX_BYTES (256u << 20)

int text_id(unsigned char byte)
{
    if (byte == '\n')
        return 1;
    if (byte == '\t')
        return 2;
    if (byte >= ' ' && byte <= '~')
        return 3 + (byte - ' ');
    return 0;
}

char text_char(int id)
{
    if (id == 1)
        return '\n';
    if (id == 2)
        return '\t';
    if (id >= 3 && id < TEXT_VOCAB)
        return (char)(' ' + id - 3);
    return '?';
}

void text_window(const uint8_t *text, size_t start, int len, int *x, int *y)
{
    for (int t = 0; t < len; t++) {
        x[t] = text[start + t];
        y[t] = text[start + t + 1];
    }
}

/* A growing byte buffer. */
struct buf {
    uint8_t *p;
    size_t n, cap;
};

static bool put(struct buf *b, const char *s, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 20;
        uint8_t *p;
        while (cap < b->n + n)
            cap *= 2;
        p = realloc(b->p, cap);
        if (!p)
            return false;
        b->p = p;
        b->cap = cap;
    }
    for (size_t i = 0; i < n; i++)
        b->p[b->n + i] = (uint8_t)text_id((unsigned char)s[i]);
    b->n += n;
    return true;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names of DIR's regular files without the .dat indexes, sorted; -1 with err. */
static int list_files(const char *dir, char ***names, int *count, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0, cap = 0;
    char **v = NULL;

    if (!d) {
        snprintf(err, errlen, "%s: cannot open the fortune directory (%s; Debian: apt-get install fortunes)", dir,
                 strerror(errno));
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || (len > 4 && strcmp(e->d_name + len - 4, ".dat") == 0))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            char **w = realloc(v, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *v);
            if (!w)
                break;
            v = w;
        }
        v[n] = strdup(e->d_name);
        if (!v[n])
            break;
        n++;
    }
    closedir(d);
    qsort(v, (size_t)n, sizeof *v, by_name);
    *names = v;
    *count = n;
    if (n == 0) {
        snprintf(err, errlen, "%s: no fortune files there (Debian: apt-get install fortunes)", dir);
        return -1;
    }
    return 0;
}

/* Appends the fortunes of one file's bytes to train and val; counts them in *k. */
static bool split_fortunes(const char *s, size_t n, long *k, struct buf *train, struct buf *val)
{
    size_t start = 0, line = 0;
    while (line < n) {
        size_t end = line;
        while (end < n && s[end] != '\n')
            end++;
        bool separator = end - line == 1 && s[line] == '%', last = end + 1 >= n;
        size_t stop = separator ? line : (end < n ? end + 1 : n);
        if (separator || last) {
            if (stop > start) {
                struct buf *to = *k % TEXT_VAL_EVERY == TEXT_VAL_EVERY - 1 ? val : train;
                if (!put(to, s + start, stop - start) || !put(to, "%\n", 2))
                    return false;
                (*k)++;
            }
            start = end + 1;
        }
        line = end + 1;
    }
    return true;
}

/* Reads PATH whole into *data (malloc'ed); -1 with err. */
static int read_file(const char *path, char **data, size_t *n, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    struct stat st;

    if (!f || fstat(fileno(f), &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    if ((unsigned long long)st.st_size > TEXT_MAX_BYTES) {
        snprintf(err, errlen, "%s: more than %u MB: not a fortune file", path, TEXT_MAX_BYTES >> 20);
        fclose(f);
        return -1;
    }
    *data = malloc((size_t)st.st_size + 1);
    *n = *data ? fread(*data, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (!*data || *n != (size_t)st.st_size) {
        snprintf(err, errlen, "%s: %s", path, *data ? "short read" : "out of memory");
        free(*data);
        return -1;
    }
    return 0;
}

int text_read_dir(const char *dir, struct text_corpus *c, char *err, size_t errlen)
{
    char **names = NULL;
    struct buf train = {0}, val = {0};
    int count = 0, rc = -1;

    memset(c, 0, sizeof *c);
    if (list_files(dir, &names, &count, err, errlen) != 0)
        goto out;
    for (int i = 0; i < count; i++) {
        char path[4096], *data;
        size_t n;
        bool ok;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (read_file(path, &data, &n, err, errlen) != 0)
            goto out;
        ok = split_fortunes(data, n, &c->fortunes, &train, &val);
        free(data);
        if (!ok) {
            snprintf(err, errlen, "out of memory for the text of %s", dir);
            goto out;
        }
    }
    c->files = count;
    c->train = train.p;
    c->ntrain = train.n;
    c->val = val.p;
    c->nval = val.n;
    train.p = val.p = NULL;
    rc = 0;
out:
    for (int i = 0; i < count; i++)
        free(names[i]);
    free(names);
    free(train.p);
    free(val.p);
    return rc;
}

static void bcast_text(uint8_t **p, size_t *n, int rank, MPI_Comm comm)
{
    unsigned long long len = *n;
    MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
    *n = (size_t)len;
    if (rank != 0) {
        *p = malloc(*n ? *n : 1);
        if (!*p) {
            fprintf(stderr, "apsmpi_train: rank %d: out of memory for %zu bytes of text\n", rank, *n);
            MPI_Abort(comm, 1);
        }
    }
    MPI_Bcast(*p, (int)*n, MPI_BYTE, 0, comm);
}

int text_load(const char *dir, struct text_corpus *c, MPI_Comm comm, char *err, size_t errlen)
{
    int rank, ok = 1;

    memset(c, 0, sizeof *c);
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        ok = text_read_dir(dir, c, err, errlen) == 0;
        if (ok && (c->ntrain < 1024 || c->nval < 1024)) {
            snprintf(err, errlen, "%s: too little text (%zu training and %zu validation characters)", dir, c->ntrain,
                     c->nval);
            text_free(c);
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (!ok) {
        if (rank != 0)
            snprintf(err, errlen, "rank 0 could not load the text");
        return -1;
    }
    MPI_Bcast(&c->files, 1, MPI_INT, 0, comm);
    MPI_Bcast(&c->fortunes, 1, MPI_LONG, 0, comm);
    bcast_text(&c->train, &c->ntrain, rank, comm);
    bcast_text(&c->val, &c->nval, rank, comm);
    return 0;
}

void text_free(struct text_corpus *c)
{
    free(c->train);
    free(c->val);
    memset(c, 0, sizeof *c);
}
