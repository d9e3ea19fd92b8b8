/* data.h: the Fashion-MNIST training and test sets, loaded once by rank 0 and shared with every rank. */
#ifndef TRAIN_DATA_H
#define TRAIN_DATA_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define DATA_SIDE 28
#define DATA_PIXELS (DATA_SIDE * DATA_SIDE)
#define DATA_CLASSES 10

struct dataset {
    uint32_t n;      /* images */
    uint8_t *images; /* n * DATA_PIXELS, row-major 28x28 */
    uint8_t *labels; /* n, each < DATA_CLASSES */
};

/* Collective over comm: rank 0 reads the four IDX files of DIR and broadcasts them.
 * Returns 0 on every rank, or -1 on every rank with rank 0's one-line reason in err. */
int data_load(const char *dir, struct dataset *train, struct dataset *test, MPI_Comm comm, char *err, size_t errlen);
void data_free(struct dataset *d);

/* The images idx[0..count) as normalized floats (count x DATA_PIXELS) and their labels. */
void data_batch(const struct dataset *d, const uint32_t *idx, int count, float *x, int *y);

#endif
