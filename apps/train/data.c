/* data.c: loads Fashion-MNIST (checks that images and labels match), broadcasts it, and builds normalized batches. */
#include "data.h"

#include "idx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Mean and standard deviation of Fashion-MNIST's training pixels (on a 0..1 scale). */
#define PIXEL_MEAN 0.2860f
#define PIXEL_STD 0.3530f

/* Reads DIR/PREFIX-images-idx3-ubyte.gz and DIR/PREFIX-labels-idx1-ubyte.gz into d. */
static int load_pair(const char *dir, const char *prefix, struct dataset *d, char *err, size_t errlen)
{
    char path[4096], ipath[4096];
    struct idx_file img, lab;

    snprintf(ipath, sizeof ipath, "%s/%s-images-idx3-ubyte.gz", dir, prefix);
    if (idx_read(ipath, 3, &img, err, errlen) != 0)
        return -1;
    if (img.dims[1] != DATA_SIDE || img.dims[2] != DATA_SIDE) {
        snprintf(err, errlen, "%s: images are %ux%u, expected %dx%d", ipath, img.dims[1], img.dims[2], DATA_SIDE,
                 DATA_SIDE);
        idx_free(&img);
        return -1;
    }
    snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
    if (idx_read(path, 1, &lab, err, errlen) != 0) {
        idx_free(&img);
        return -1;
    }
    if (lab.dims[0] != img.dims[0]) {
        snprintf(err, errlen, "%s: %u labels for the %u images of %s", path, lab.dims[0], img.dims[0], ipath);
        goto fail;
    }
    for (uint32_t i = 0; i < lab.dims[0]; i++)
        if (lab.data[i] >= DATA_CLASSES) {
            snprintf(err, errlen, "%s: label %u of item %u is not a class 0..%d", path, lab.data[i], i,
                     DATA_CLASSES - 1);
            goto fail;
        }
    d->n = img.dims[0];
    d->images = img.data;
    d->labels = lab.data;
    return 0;
fail:
    idx_free(&img);
    idx_free(&lab);
    return -1;
}

static void bcast_set(struct dataset *d, int rank, MPI_Comm comm)
{
    MPI_Bcast(&d->n, 1, MPI_UINT32_T, 0, comm);
    if (rank != 0) {
        d->images = malloc((size_t)d->n * DATA_PIXELS);
        d->labels = malloc(d->n);
        if (!d->images || !d->labels) {
            fprintf(stderr, "apsmpi_train: rank %d: out of memory for %u images\n", rank, d->n);
            MPI_Abort(comm, 1);
        }
    }
    MPI_Bcast(d->images, (int)(d->n * DATA_PIXELS), MPI_BYTE, 0, comm);
    MPI_Bcast(d->labels, (int)d->n, MPI_BYTE, 0, comm);
}

int data_load(const char *dir, struct dataset *train, struct dataset *test, MPI_Comm comm, char *err, size_t errlen)
{
    int rank, ok = 1;

    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        if (load_pair(dir, "train", train, err, errlen) != 0)
            ok = 0;
        else if (load_pair(dir, "t10k", test, err, errlen) != 0) {
            data_free(train);
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (!ok) {
        if (rank != 0)
            snprintf(err, errlen, "rank 0 could not load the data");
        return -1;
    }
    bcast_set(train, rank, comm);
    bcast_set(test, rank, comm);
    return 0;
}

void data_free(struct dataset *d)
{
    free(d->images);
    free(d->labels);
    memset(d, 0, sizeof *d);
}

void data_batch(const struct dataset *d, const uint32_t *idx, int count, float *x, int *y)
{
    float table[256];
    for (int v = 0; v < 256; v++)
        table[v] = ((float)v / 255.0f - PIXEL_MEAN) / PIXEL_STD;
    for (int b = 0; b < count; b++) {
        const uint8_t *img = d->images + (size_t)idx[b] * DATA_PIXELS;
        for (int p = 0; p < DATA_PIXELS; p++)
            x[(size_t)b * DATA_PIXELS + p] = table[img[p]];
        y[b] = d->labels[idx[b]];
    }
}
