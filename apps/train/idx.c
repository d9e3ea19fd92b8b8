/* idx.c: reads and validates a gzip-compressed IDX file with zlib (magic number, dimensions, exact size). */
#include "idx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The largest file accepted: Fashion-MNIST's training images are 47 MB. */
#define IDX_MAX_BYTES (1u << 30)

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads exactly len bytes; returns the number read, or -1 on a zlib error (message in err). */
static long read_all(gzFile gz, const char *path, void *buf, size_t len, char *err, size_t errlen)
{
    size_t got = 0;
    while (got < len) {
        unsigned chunk = len - got > (1u << 30) ? 1u << 30 : (unsigned)(len - got);
        int n = gzread(gz, (uint8_t *)buf + got, chunk);
        if (n < 0) {
            int code;
            const char *msg = gzerror(gz, &code);
            size_t plen = strlen(path);
            /* zlib prefixes its message with "PATH: " */
            if (strncmp(msg, path, plen) == 0 && strncmp(msg + plen, ": ", 2) == 0)
                msg += plen + 2;
            snprintf(err, errlen, "%s: corrupt gzip data (%s)", path, code == Z_ERRNO ? strerror(errno) : msg);
            return -1;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (long)got;
}

int idx_read(const char *path, int ndims, struct idx_file *out, char *err, size_t errlen)
{
    uint8_t head[16], extra;
    size_t head_len = 4 + 4 * (size_t)ndims, bytes = 1;
    long n;
    gzFile gz;

    memset(out, 0, sizeof *out);
    gz = gzopen(path, "rb");
    if (!gz) {
        snprintf(err, errlen, "%s: cannot open (%s)", path, errno ? strerror(errno) : "out of memory");
        return -1;
    }
    n = read_all(gz, path, head, head_len, err, errlen);
    if (n < 0)
        goto fail;
    if ((size_t)n < head_len) {
        snprintf(err, errlen, "%s: truncated: %ld bytes, shorter than an IDX header", path, n);
        goto fail;
    }
    if (head[0] != 0 || head[1] != 0 || head[2] != 0x08 || head[3] != ndims) {
        snprintf(err, errlen, "%s: bad magic number 0x%08x (expected 0x%08x: IDX of unsigned bytes, %d dimension%s)",
                 path, be32(head), 0x0800u | (unsigned)ndims, ndims, ndims > 1 ? "s" : "");
        goto fail;
    }
    out->ndims = ndims;
    for (int i = 0; i < ndims; i++) {
        out->dims[i] = be32(head + 4 + 4 * i);
        if (out->dims[i] == 0 || bytes * out->dims[i] > IDX_MAX_BYTES) {
            snprintf(err, errlen, "%s: dimension %d is %u, not between 1 and the %u-byte limit", path, i, out->dims[i],
                     IDX_MAX_BYTES);
            goto fail;
        }
        bytes *= out->dims[i];
    }
    out->data = malloc(bytes);
    if (!out->data) {
        snprintf(err, errlen, "%s: out of memory for %zu bytes", path, bytes);
        goto fail;
    }
    n = read_all(gz, path, out->data, bytes, err, errlen);
    if (n < 0)
        goto fail;
    if ((size_t)n < bytes) {
        snprintf(err, errlen, "%s: truncated: %zu data bytes, the header promises %zu", path, (size_t)n, bytes);
        goto fail;
    }
    n = read_all(gz, path, &extra, 1, err, errlen);
    if (n < 0)
        goto fail;
    if (n > 0) {
        snprintf(err, errlen, "%s: longer than the %zu data bytes its header promises", path, bytes);
        goto fail;
    }
    gzclose(gz);
    return 0;
fail:
    gzclose(gz);
    idx_free(out);
    return -1;
}

void idx_free(struct idx_file *f)
{
    free(f->data);
    f->data = NULL;
}
