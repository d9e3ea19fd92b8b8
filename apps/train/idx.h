/* idx.h: reads one gzip-compressed IDX file (the format of MNIST and Fashion-MNIST) of unsigned bytes. */
#ifndef TRAIN_IDX_H
#define TRAIN_IDX_H

#include <stddef.h>
#include <stdint.h>

struct idx_file {
    int ndims;        /* 1 (labels) or 3 (images) */
    uint32_t dims[3]; /* dims[0]: the number of items */
    uint8_t *data;    /* dims[0] * dims[1] * ... bytes, malloc'ed */
};

/* Reads PATH, which must be an IDX file of unsigned bytes with NDIMS dimensions. Returns 0,
 * or -1 with a one-line reason (naming the file) in err. */
int idx_read(const char *path, int ndims, struct idx_file *out, char *err, size_t errlen);
void idx_free(struct idx_file *f);

#endif
