/* call.h: one compressed reduction in progress: its input, the scales all ranks agreed on, its buffers. */
#ifndef APSMPI_CALL_H
#define APSMPI_CALL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "codec.h"

/* What all ranks agreed to do with an eligible call. */
enum apsmpi_path { APSMPI_PATH_COMPRESS = 0, APSMPI_PATH_FP32 = 1 };

typedef struct apsmpi_call {
    const float *in;  /* the whole input buffer */
    size_t n;         /* its elements */
    int nranks, rank;
    int16_t *scales;  /* one per block, agreed */
    size_t block_len;
    size_t nblocks;
    void *packed;     /* the encoded input */
    void *result;     /* a second encoded buffer, when the call asked for one */
    apsmpi_rounding rounding;
    uint64_t codec_ns;
} apsmpi_call;

/* Bytes of n elements encoded in the configured format, in whole packing groups. */
size_t apsmpi_packed_bytes(size_t n);

/* Starts a call on the n-element input `in`. */
void apsmpi_call_begin(apsmpi_call *c, const float *in, size_t n, MPI_Comm comm);

/* Finds the local block exponents, takes working buffers of packed_size and result_size
 * bytes (result_size 0: none), and agrees with the other ranks in one MAX reduction on the
 * exponents and on whether every rank got its buffers (local_failed: this rank already
 * lacks one); everything that decides the path is in that agreed array, so all ranks take
 * the same path. Returns an apsmpi_path, or a negative MPI error code. */
int apsmpi_call_agree(apsmpi_call *c, MPI_Comm comm, size_t packed_size, size_t result_size, int local_failed);

/* Encodes in[first, first+n) into out; first must be a multiple of the packing group. */
void apsmpi_call_encode(apsmpi_call *c, size_t first, size_t n, void *out);

/* Decodes n elements of packed data `in`, which start at element `first`, into out. */
void apsmpi_call_decode(apsmpi_call *c, const void *in, size_t first, size_t n, float *out);

/* Counts the call in the statistics; returns rc. */
int apsmpi_call_end(apsmpi_call *c, int rc);

#endif
